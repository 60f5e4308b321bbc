// Prints when the X server's screen changes: one line per damaged rectangle of the root window,
// "<wall-clock ms> <x> <y> <width> <height>", after a first line "ready". The app benchmark
// (scripts/bench-app-wait.mjs) times a person's wait up to the moment the pixels change, which
// no timer inside the page can see: the web process paints, hands the bitmap to the app's
// process, and GTK draws it into the window. Built by that script with the system's C compiler.
#include <X11/Xlib.h>
#include <X11/extensions/Xdamage.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  Display *display = XOpenDisplay(NULL);
  if (!display) {
    fprintf(stderr, "damage-watch: cannot open the X display (is DISPLAY set?)\n");
    return 1;
  }
  int event_base, error_base;
  if (!XDamageQueryExtension(display, &event_base, &error_base)) {
    fprintf(stderr, "damage-watch: the X server has no DAMAGE extension\n");
    return 1;
  }
  // Raw rectangles: every drawing request reports, not only the first since the last reset.
  XDamageCreate(display, DefaultRootWindow(display), XDamageReportRawRectangles);
  XSync(display, False);
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    XEvent event;
    XNextEvent(display, &event);
    if (event.type != event_base + XDamageNotify) continue;
    const XDamageNotifyEvent *damage = (const XDamageNotifyEvent *)&event;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    printf("%.3f %d %d %d %d\n", now.tv_sec * 1e3 + now.tv_nsec / 1e6, damage->area.x, damage->area.y,
           damage->area.width, damage->area.height);
    fflush(stdout);
  }
}
