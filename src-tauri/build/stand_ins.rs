//! Stand-in libraries for parts of WebKitGTK's stack the app never uses but its processes load
//! anyway (docs/benchmarks.md#app-idle-memory). Each is a small C file (`stand-ins/*.c`) that
//! answers the few calls the app's path makes, compiled with an alias for every other symbol the
//! consumer may ask for, which aborts with a message. They go to `<binary dir>/stand-ins/<name>/`,
//! under the names of the libraries they stand in for; the .deb and .rpm install them under
//! `/usr/lib/ironclaw-app/stand-ins/` (`scripts/stage-stand-ins.sh`).
//!
//! - `speech`: a silent speech synthesiser in place of CMU Flite, which WebKitGTK links for the
//!   Web Speech API. Relocating Flite's voice tables costs about 5.5 MiB in each of the app's
//!   three processes. The binary finds it first through its DT_RPATH (which, unlike
//!   DT_RUNPATH, also applies to the libraries its libraries need); WebKit's processes through
//!   `LD_LIBRARY_PATH` (`stand_ins::prepare`). A stand-in that lacked a function the installed
//!   WebKit imports would stop the app at load (WebKit is linked with BIND_NOW), so it exports
//!   every function the installed Flite exports, and the build checks that WebKit's imports
//!   from Flite are all there before it links the binary to it. Flite's 31,000 exported data
//!   symbols (voice tables) are left out: WebKit takes none, and exporting them cost 0.4 MiB in
//!   each process.
//! - `gl`: LLVM for Mesa's software driver in the web process, when the webview draws without
//!   a GPU: 26 MiB. It exports exactly what the installed driver imports from LLVM, and
//!   records which driver file that was (`driver`); `stand_ins::prepare` uses it only while
//!   that file is unchanged, with `GALLIUM_DRIVER=softpipe`.
//!
//! Where anything is missing (no Flite in this WebKit, no Mesa, no binutils), the app links
//! and runs as before. `IRONCLAW_STAND_INS=off` builds without them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The functions `stand-ins/speech.c` writes out; every other Flite function is an alias.
const SPEECH_WRITTEN: &[&str] = &[
    "flite_init",
    "flite_add_lang",
    "usenglish_init",
    "cmulex_init",
    "register_cmu_us_awb",
    "register_cmu_us_kal",
    "register_cmu_us_rms",
    "register_cmu_us_slt",
    "delete_voice",
    "flite_text_to_wave",
    "cst_wave_resample",
    "delete_wave",
];

/// The functions `stand-ins/gl.c` writes out.
const GL_WRITTEN: &[&str] = &["LLVMIsMultithreaded"];

pub fn build(os: &str, env: &str) {
    println!("cargo:rerun-if-changed=stand-ins");
    println!("cargo:rerun-if-env-changed=IRONCLAW_STAND_INS");
    let wanted = os == "linux"
        && env == "gnu"
        && std::env::var("IRONCLAW_STAND_INS").as_deref() != Ok("off");
    // The directories are not watched (the build writes them): deleted, the processes load
    // the system's libraries again (`stand_ins::prepare` finds no directory). One this build
    // does not make is removed, so that no process finds a stale one.
    // pkg-config once: where the system's WebKit, Flite and Mesa are.
    let libdir = if wanted { libdir().map(Some) } else { Ok(None) };
    let (speech, gl) = match &libdir {
        Ok(Some(dir)) => (speech(dir), gl(dir)),
        Ok(None) => (Ok(false), Ok(false)),
        Err(e) => (Err(e.clone()), Err(e.clone())),
    };
    match speech {
        Ok(true) => {
            // `--disable-new-dtags`: DT_RPATH, searched for the libraries WebKit needs too.
            println!("cargo:rustc-link-arg-bins=-Wl,--disable-new-dtags");
            // Beside the binary as built, and where the .deb and .rpm install them
            // (`scripts/stage-stand-ins.sh`).
            println!("cargo:rustc-link-arg-bins=-Wl,-rpath,$ORIGIN/stand-ins/speech");
            println!(
                "cargo:rustc-link-arg-bins=-Wl,-rpath,$ORIGIN/../lib/ironclaw-app/stand-ins/speech"
            );
        }
        Ok(false) => remove("speech"),
        Err(e) => {
            remove("speech");
            println!("cargo:warning=the app links the system's speech synthesiser: {e}");
        }
    }
    match gl {
        Ok(true) => {}
        Ok(false) => remove("gl"),
        Err(e) => {
            remove("gl");
            println!("cargo:warning=the web process without a GPU keeps the system's LLVM: {e}");
        }
    }
}

/// Takes away `<binary dir>/stand-ins/<name>`, if there is one.
fn remove(name: &str) {
    let Ok(out) = std::env::var("OUT_DIR") else {
        return;
    };
    if let Ok(bin) = binary_dir(Path::new(&out)) {
        let _ = std::fs::remove_dir_all(bin.join("stand-ins").join(name));
    }
}

/// The speech stand-in; `false` where WebKit links no Flite.
fn speech(libdir: &Path) -> Result<bool, String> {
    let webkit = libdir.join("libwebkit2gtk-4.1.so.0");
    if !webkit.exists() {
        return Ok(false);
    }
    println!("cargo:rerun-if-changed={}", webkit.display());
    let sonames: Vec<String> = needed(&webkit)?
        .into_iter()
        .filter(|n| n.starts_with("libflite"))
        .collect();
    if sonames.is_empty() {
        return Ok(false);
    }
    let (mut functions, mut objects) = (BTreeSet::new(), BTreeSet::new());
    for name in &sonames {
        let lib = libdir.join(name);
        println!("cargo:rerun-if-changed={}", lib.display());
        for symbol in defined(&lib)? {
            if symbol.function {
                functions.insert(symbol.name);
            } else {
                objects.insert(symbol.name);
            }
        }
    }
    let imported: BTreeSet<String> = undefined(&webkit)?.into_iter().map(|s| s.name).collect();
    let aliases: Vec<Symbol> = functions
        .iter()
        .filter(|n| !SPEECH_WRITTEN.contains(&n.as_str()) && is_c_identifier(n))
        .map(|n| Symbol {
            name: n.clone(),
            function: true,
            version: None,
        })
        .collect();
    // What WebKit takes from Flite must all be in the stand-in.
    let missing: Vec<&String> = functions
        .iter()
        .chain(&objects)
        .filter(|n| imported.contains(*n))
        .filter(|n| !SPEECH_WRITTEN.contains(&n.as_str()))
        .filter(|n| objects.contains(*n) || !is_c_identifier(n))
        .collect();
    if !missing.is_empty() {
        return Err(format!("the stand-in cannot offer {missing:?}"));
    }
    let required: BTreeSet<String> = functions
        .iter()
        .chain(&objects)
        .filter(|n| imported.contains(*n))
        .cloned()
        .collect();
    install("speech", "speech.c", &sonames, &aliases, &required)?;
    Ok(true)
}

/// The LLVM stand-in for Mesa's software driver, with the identity of that driver; `false`
/// where there is no such driver or it links no LLVM.
fn gl(libdir: &Path) -> Result<bool, String> {
    let driver = libdir.join("dri/swrast_dri.so");
    if !driver.exists() {
        return Ok(false);
    }
    println!("cargo:rerun-if-changed={}", driver.display());
    let Some(soname) = needed(&driver)?
        .into_iter()
        .find(|n| n.starts_with("libLLVM"))
    else {
        return Ok(false);
    };
    let llvm = libdir.join(&soname);
    println!("cargo:rerun-if-changed={}", llvm.display());
    let llvm_defines = defined(&llvm)?;
    let functions: BTreeSet<&str> = llvm_defines
        .iter()
        .filter(|s| s.function)
        .map(|s| s.name.as_str())
        .collect();
    let objects: BTreeSet<&str> = llvm_defines
        .iter()
        .filter(|s| !s.function)
        .map(|s| s.name.as_str())
        .collect();
    let mut aliases = Vec::new();
    let mut required = BTreeSet::new();
    for import in undefined(&driver)? {
        let function = functions.contains(import.name.as_str());
        if !function && !objects.contains(import.name.as_str()) {
            continue; // not LLVM's
        }
        if !is_c_identifier(&import.name) {
            return Err(format!("cannot offer {}", import.name));
        }
        required.insert(import.name.clone());
        if !GL_WRITTEN.contains(&import.name.as_str()) {
            aliases.push(Symbol { function, ..import });
        }
    }
    let dir = install("gl", "gl.c", &[soname], &aliases, &required)?;
    let identity = driver_identity(&driver)?;
    write_if_changed(&dir.join("driver"), identity.as_bytes())?;
    Ok(true)
}

/// What `stand_ins::prepare` compares before it uses the `gl` stand-in: the driver's path,
/// then its size, modification time (ns) and inode.
fn driver_identity(driver: &Path) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(driver).map_err(|e| format!("{}: {e}", driver.display()))?;
    Ok(format!(
        "{}\n{} {} {}\n",
        driver.display(),
        meta.size(),
        meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
        meta.ino()
    ))
}

/// Compiles `stand-ins/<source>` with `aliases` into `<binary dir>/stand-ins/<name>/`, as the
/// first of `sonames`; the others are links to it (the dynamic linker loads one file once,
/// and finds every name in it). Installs nothing unless the library defines every name in
/// `required`: one missing would stop the process that loads it.
fn install(
    name: &str,
    source: &str,
    sonames: &[String],
    aliases: &[Symbol],
    required: &BTreeSet<String>,
) -> Result<PathBuf, String> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let mut code = std::fs::read_to_string(manifest.join("stand-ins").join(source))
        .map_err(|e| format!("stand-ins/{source}: {e}"))?;
    code.push_str("\n/* Generated by build.rs (build/stand_ins.rs). */\n");
    for alias in aliases {
        code.push_str(&if alias.function {
            format!(
                "void {}(void) __attribute__((alias(\"ironclaw_missing\")));\n",
                alias.name
            )
        } else {
            format!(
                "extern char {}[256] __attribute__((alias(\"ironclaw_zero\")));\n",
                alias.name
            )
        });
    }

    let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let c = out.join(format!("stand-in-{name}.c"));
    std::fs::write(&c, code).map_err(|e| format!("{}: {e}", c.display()))?;
    let versions: BTreeSet<&str> = aliases
        .iter()
        .filter_map(|a| a.version.as_deref())
        .collect();
    let script = out.join(format!("stand-in-{name}.map"));
    let nodes: String = versions
        .iter()
        .map(|v| format!("{v} {{ global: *; }};\n"))
        .collect();
    std::fs::write(&script, nodes).map_err(|e| format!("{}: {e}", script.display()))?;

    let first = sonames
        .first()
        .ok_or_else(|| format!("no library name for the {name} stand-in"))?;
    let built = out.join(first);
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let soname = format!("-Wl,-soname,{first}");
    let include = format!("-I{}", path_str(&manifest.join("stand-ins"))?);
    let mut args = vec!["-shared", "-fPIC", "-O2", "-w", &include, &soname];
    let version_script = format!("-Wl,--version-script={}", path_str(&script)?);
    if !versions.is_empty() {
        args.push(&version_script);
    }
    args.extend(["-o", path_str(&built)?, path_str(&c)?]);
    run(&compiler, &args)?;
    let offered: BTreeSet<String> = defined(&built)?.into_iter().map(|s| s.name).collect();
    let missing: Vec<&String> = required.difference(&offered).collect();
    if !missing.is_empty() {
        return Err(format!("the {name} stand-in does not define {missing:?}"));
    }

    let dir = binary_dir(&out)?.join("stand-ins").join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let library = std::fs::read(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    write_if_changed(&dir.join(first), &library)?;
    for other in sonames.iter().skip(1) {
        let link = dir.join(other);
        if std::fs::read_link(&link).is_ok_and(|to| to == Path::new(first)) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(first, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(dir)
}

/// Writes through a new file renamed into place (a running app keeps the file it mapped), and
/// not at all when nothing changed. (`ironclaw_ipcgen::write_if_changed` writes text in place.)
fn write_if_changed(path: &Path, contents: &[u8]) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|old| old == contents) {
        return Ok(());
    }
    let staged = path.with_extension("new");
    std::fs::write(&staged, contents).map_err(|e| format!("{}: {e}", staged.display()))?;
    std::fs::rename(&staged, path).map_err(|e| format!("{}: {e}", path.display()))
}

struct Symbol {
    name: String,
    function: bool,
    version: Option<String>,
}

fn libdir() -> Result<PathBuf, String> {
    let libdir = run("pkg-config", &["--variable=libdir", "webkit2gtk-4.1"])?;
    Ok(PathBuf::from(libdir.trim()))
}

/// The libraries `lib` names as DT_NEEDED, in order.
fn needed(lib: &Path) -> Result<Vec<String>, String> {
    let dynamic = run("readelf", &["-d", "-W", path_str(lib)?])?;
    Ok(dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_string()))
        .collect())
}

/// The dynamic symbols `lib` defines.
fn defined(lib: &Path) -> Result<Vec<Symbol>, String> {
    let table = run("nm", &["-D", "--defined-only", path_str(lib)?])?;
    Ok(table
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let (_, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            let function = match kind {
                "T" | "t" | "W" | "w" | "i" => true,
                "D" | "d" | "B" | "b" | "R" | "r" | "V" | "v" | "G" | "g" | "S" | "s" => false,
                _ => return None,
            };
            Some(symbol(name, function))
        })
        .collect())
}

/// The dynamic symbols `lib` imports (`function` is not known from the importer's side).
fn undefined(lib: &Path) -> Result<Vec<Symbol>, String> {
    let table = run("nm", &["-D", "--undefined-only", path_str(lib)?])?;
    Ok(table
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|n| symbol(n, true))
        .collect())
}

/// `name@VERSION`, `name@@VERSION` or `name`.
fn symbol(raw: &str, function: bool) -> Symbol {
    let mut parts = raw.splitn(2, '@');
    let name = parts.next().unwrap_or_default().to_string();
    let version = parts
        .next()
        .map(|v| v.trim_start_matches('@').to_string())
        .filter(|v| !v.is_empty());
    Symbol {
        name,
        function,
        version,
    }
}

fn is_c_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `target/<profile>/`: where cargo puts the binary, three levels above `OUT_DIR`
/// (`build/<package>-<hash>/out`).
fn binary_dir(out: &Path) -> Result<PathBuf, String> {
    out.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("no binary directory above {}", out.display()))
}

fn path_str(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("{program}: {e}"))
}
