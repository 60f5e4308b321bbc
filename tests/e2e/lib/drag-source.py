"""A real desktop drag source for the e2e tests: a small GTK window at the screen's top-left
corner that offers the files named on the command line as a text/uri-list, the way a file
manager does. xdotool presses on it and moves onto the app, so the app gets a genuine XDND drop.
Prints "ready" once mapped and "drag-end" when a drag finished."""

import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

uris = [GLib.filename_to_uri(p, None) for p in sys.argv[1:]]
window = Gtk.Window(title="dnd-source")
window.set_default_size(120, 120)
window.move(0, 0)
box = Gtk.EventBox()
box.add(Gtk.Label(label="files"))
window.add(box)
box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
box.drag_source_add_uri_targets()
box.connect("drag-data-get", lambda _w, _ctx, data, _info, _time: data.set_uris(uris))
box.connect("drag-end", lambda _w, _ctx: print("drag-end", flush=True))
window.connect("map-event", lambda *_: print("ready", flush=True))
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
