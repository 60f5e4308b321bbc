/*
 * What every function a stand-in does not write out is an alias of (build/stand_ins.rs):
 * it says on stderr which stand-in was asked for more than it offers, then aborts.
 */
#include <stdlib.h>
#include <unistd.h>

#define IRONCLAW_MISSING(message)                                   \
    __attribute__((noreturn, used)) static void ironclaw_missing(void) { \
        static const char text[] = message;                         \
        ssize_t written = write(2, text, sizeof text - 1);          \
        (void)written;                                              \
        abort();                                                    \
    }
