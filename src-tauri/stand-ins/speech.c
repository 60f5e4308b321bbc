/*
 * A silent stand-in for CMU Flite, the speech synthesiser WebKitGTK links for the Web Speech
 * API. IronClaw's page never speaks, yet every process WebKit runs (the app, its web process,
 * its network process) loads Flite's 13 libraries, and relocating their voice tables costs
 * about 5.5 MiB in each: 17 MiB of an idle app's memory for nothing
 * (docs/benchmarks.md#app-idle-memory).
 *
 * build.rs compiles this file together with an alias for every other function the installed
 * Flite exports, so WebKit links against it whatever it calls. These are the functions the
 * installed WebKitGTK calls; they answer as a synthesiser with four silent voices would, so a
 * page that does call `speechSynthesis.speak()` gets silence, not a crash. Anything else aborts
 * with a message naming this file (ironclaw_missing below).
 *
 * Layouts from flite 2.x's cst_voice.h and cst_wave.h; only pointers to static objects leave
 * this file.
 */
#include <stddef.h>

#include "missing.h"

typedef struct {
    const char *name;
    void *features;
    void *ffunctions;
    void *utt_init;
} cst_voice;

typedef struct {
    const char *type;
    int sample_rate;
    int num_samples;
    int num_channels;
    short *samples;
} cst_wave;

static short no_samples[1];
static cst_voice awb = {"awb", NULL, NULL, NULL};
static cst_voice kal = {"kal", NULL, NULL, NULL};
static cst_voice rms = {"rms", NULL, NULL, NULL};
static cst_voice slt = {"slt", NULL, NULL, NULL};
static cst_wave silence = {"riff", 16000, 0, 1, no_samples};

int flite_init(void) { return 0; }
int flite_add_lang(const char *lang, void *lang_init, void *lex_init) {
    (void)lang; (void)lang_init; (void)lex_init;
    return 1;
}
void usenglish_init(cst_voice *voice) { (void)voice; }
void *cmulex_init(void) { return NULL; }
cst_voice *register_cmu_us_awb(const char *voxdir) { (void)voxdir; return &awb; }
cst_voice *register_cmu_us_kal(const char *voxdir) { (void)voxdir; return &kal; }
cst_voice *register_cmu_us_rms(const char *voxdir) { (void)voxdir; return &rms; }
cst_voice *register_cmu_us_slt(const char *voxdir) { (void)voxdir; return &slt; }
void delete_voice(cst_voice *voice) { (void)voice; }
cst_wave *flite_text_to_wave(const char *text, cst_voice *voice) {
    (void)text; (void)voice;
    return &silence;
}
void cst_wave_resample(cst_wave *wave, int sample_rate) { (void)wave; (void)sample_rate; }
void delete_wave(cst_wave *wave) { (void)wave; }

IRONCLAW_MISSING(
    "IronClaw: WebKit called a speech synthesiser function that the app's silent stand-in "
    "(src-tauri/stand-ins/speech.c) does not provide; build with IRONCLAW_STAND_INS=off\n")
