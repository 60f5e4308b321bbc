//! The table of Python functions IronClaw knows: what each does, and which argument carries the
//! command, code, mode or path to look at.

use crate::{Category as C, RiskLevel};
use RiskLevel::{Destructive as D, Normal as N};

/// What calling a known function does, and where its interesting argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
    /// A fixed effect; the positional argument at the index (if any) is a path worth placing.
    Effect(RiskLevel, C, &'static str, Option<usize>),
    /// First argument is a shell command line.
    Shell,
    /// `subprocess.*`: a command line or an argv, `shell=` and `executable=` considered.
    Subprocess,
    /// Every positional argument from the index on is one argv word.
    ExecArgs(usize),
    /// `os.execv(path, argv)`-style, with the program path at the index.
    ExecV(usize),
    /// `os.execl(path, arg0, arg1, ...)`-style, with the program path at the index.
    ExecL(usize),
    /// `exec`/`eval`/`compile`: first argument is Python code.
    Code,
    /// Opens a file; the mode is the positional argument at the index, else the default.
    Open(usize, &'static str),
    /// `setattr`/`delattr` on a module changes it for the rest of the session.
    Patch,
    /// `__import__`/`importlib.import_module`.
    Import,
}

pub(super) fn rule(qualified: &str) -> Option<Rule> {
    use Rule::*;
    let delete = Effect(D, C::Delete, "deletes files", Some(0));
    let overwrite = Effect(
        D,
        C::Overwrite,
        "moves or copies files and may replace existing ones",
        Some(1),
    );
    let permissions = Effect(
        D,
        C::Permissions,
        "changes permissions or ownership",
        Some(0),
    );
    let write = Effect(N, C::Write, "creates or changes files", Some(0));
    let network = Effect(N, C::Network, "uses the network", None);
    let unpickle = Effect(
        N,
        C::DynamicCode,
        "loads pickled data, which can run arbitrary code",
        None,
    );
    let environment = Effect(
        N,
        C::Environment,
        "changes the interpreter for later steps",
        None,
    );
    Some(match qualified {
        "os.remove"
        | "os.unlink"
        | "os.rmdir"
        | "os.removedirs"
        | "shutil.rmtree"
        | "pathlib.Path.unlink"
        | "pathlib.Path.rmdir" => delete,
        "os.truncate" | "os.ftruncate" => Effect(D, C::Overwrite, "truncates files", Some(0)),
        "shutil.move"
        | "os.rename"
        | "os.replace"
        | "os.renames"
        | "shutil.copy"
        | "shutil.copy2"
        | "shutil.copyfile"
        | "pathlib.Path.rename"
        | "pathlib.Path.replace" => overwrite,
        "os.chmod"
        | "os.lchmod"
        | "os.fchmod"
        | "os.chown"
        | "os.lchown"
        | "os.fchown"
        | "shutil.chown"
        | "pathlib.Path.chmod"
        | "pathlib.Path.lchmod"
        | "os.chflags" => permissions,
        "os.setuid" | "os.setgid" | "os.seteuid" | "os.setegid" | "os.setreuid" | "os.chroot" => {
            Effect(
                D,
                C::PrivilegeEscalation,
                "changes the user or root directory",
                None,
            )
        }
        "os.kill" | "os.killpg" | "signal.pthread_kill" | "os.abort" => {
            Effect(D, C::ProcessKill, "stops processes", None)
        }
        "os.system"
        | "os.popen"
        | "subprocess.getoutput"
        | "subprocess.getstatusoutput"
        | "asyncio.create_subprocess_shell"
        | "commands.getoutput"
        | "pty.spawn" => Shell,
        "subprocess.run"
        | "subprocess.call"
        | "subprocess.check_call"
        | "subprocess.check_output"
        | "subprocess.Popen" => Subprocess,
        "asyncio.create_subprocess_exec" => ExecArgs(0),
        "os.execv" | "os.execve" | "os.execvp" | "os.execvpe" | "os.posix_spawn"
        | "os.posix_spawnp" => ExecV(0),
        "os.execl" | "os.execle" | "os.execlp" | "os.execlpe" => ExecL(0),
        "os.spawnv" | "os.spawnve" | "os.spawnvp" | "os.spawnvpe" => ExecV(1),
        "os.spawnl" | "os.spawnle" | "os.spawnlp" | "os.spawnlpe" => ExecL(1),
        "builtins.exec" | "builtins.eval" | "builtins.compile" => Code,
        "builtins.open" | "io.open" | "codecs.open" | "os.fdopen" => Open(1, "r"),
        "pathlib.Path.open" => Open(0, "r"),
        "gzip.open" | "bz2.open" | "lzma.open" | "tarfile.open" | "zipfile.ZipFile"
        | "dbm.open" => Open(1, "r"),
        "shelve.open" => Open(1, "c"),
        "builtins.setattr" | "builtins.delattr" => Patch,
        "builtins.__import__" | "importlib.import_module" => Import,
        "os.mkdir"
        | "os.makedirs"
        | "os.symlink"
        | "os.link"
        | "os.mknod"
        | "os.mkfifo"
        | "os.utime"
        | "os.write"
        | "os.open"
        | "pathlib.Path.mkdir"
        | "pathlib.Path.touch"
        | "pathlib.Path.write_text"
        | "pathlib.Path.write_bytes"
        | "pathlib.Path.symlink_to"
        | "pathlib.Path.hardlink_to"
        | "shutil.make_archive"
        | "shutil.unpack_archive"
        | "shutil.copytree"
        | "shutil.copyfileobj"
        | "sqlite3.connect"
        | "fileinput.input"
        | "logging.FileHandler"
        | "logging.basicConfig"
        | "pickle.dump"
        | "marshal.dump"
        | "json.dump"
        | "joblib.dump"
        | "numpy.save"
        | "numpy.savetxt"
        | "numpy.savez"
        | "torch.save" => write,
        "tempfile.mkdtemp"
        | "tempfile.mkstemp"
        | "tempfile.NamedTemporaryFile"
        | "tempfile.TemporaryDirectory"
        | "tempfile.TemporaryFile"
        | "tempfile.SpooledTemporaryFile" => Effect(N, C::Write, "creates temporary files", None),
        "urllib.request.urlretrieve" => Effect(N, C::Write, "downloads files", Some(1)),
        "pickle.load" | "pickle.loads" | "marshal.load" | "marshal.loads" | "shelve.Shelf"
        | "dill.load" | "dill.loads" | "joblib.load" | "torch.load" | "numpy.load" => unpickle,
        "runpy.run_path"
        | "runpy.run_module"
        | "code.interact"
        | "builtins.breakpoint"
        | "importlib.reload" => Effect(
            N,
            C::ScriptFile,
            "runs code that IronClaw cannot see into",
            None,
        ),
        "os.putenv"
        | "os.unsetenv"
        | "os.environ.update"
        | "os.environ.setdefault"
        | "os.environ.pop"
        | "os.environ.clear"
        | "sys.path.append"
        | "sys.path.insert"
        | "sys.path.extend"
        | "sys.meta_path.append"
        | "sys.meta_path.insert"
        | "sys.path_hooks.append"
        | "sys.settrace"
        | "sys.setprofile"
        | "site.addsitedir"
        | "os.umask"
        | "sys.addaudithook" => environment,
        "torch.hub.load" | "torch.hub.load_state_dict_from_url" => Effect(
            D,
            C::RemoteCode,
            "downloads and runs code from the network",
            None,
        ),
        "operator.methodcaller" | "operator.attrgetter" => Effect(
            N,
            C::DynamicCode,
            "calls a method chosen by name at run time",
            None,
        ),
        "webbrowser.open" | "webbrowser.open_new" | "webbrowser.open_new_tab" => network,
        q if q.starts_with("ctypes.") => {
            Effect(N, C::DynamicCode, "calls native code through ctypes", None)
        }
        q if [
            "socket.",
            "urllib.request.",
            "http.client.",
            "requests.",
            "httpx.",
            "urllib3.",
            "aiohttp.",
            "ftplib.",
            "smtplib.",
            "paramiko.",
        ]
        .iter()
        .any(|p| q.starts_with(p)) =>
        {
            network
        }
        _ => return None,
    })
}

/// Method names that act whatever the receiver is (the receiver's type is rarely known).
pub(super) fn method_rule(name: &str, has_args: bool) -> Option<Rule> {
    use Rule::*;
    Some(match name {
        "unlink" | "rmdir" | "rmtree" => Effect(D, C::Delete, "deletes files", None),
        "chmod" | "lchmod" | "chown" | "lchown" => {
            Effect(D, C::Permissions, "changes permissions or ownership", None)
        }
        "write_text" | "write_bytes" | "touch" | "mkdir" | "makedirs" | "symlink_to"
        | "hardlink_to" | "savefig" | "savez" | "savez_compressed" | "savetxt" | "tofile"
        | "extractall" | "extract" | "writestr" | "imwrite" | "imsave" | "write_image"
        | "write_html" | "to_netcdf" | "to_zarr" => Effect(N, C::Write, "writes files", Some(0)),
        "save" | "dump" | "to_csv" | "to_excel" | "to_json" | "to_parquet" | "to_pickle"
        | "to_feather" | "to_hdf" | "to_sql" | "to_stata" | "to_html" | "to_markdown"
        | "to_latex" | "to_xml" | "to_file" | "write_csv" | "write_parquet"
            if has_args =>
        {
            Effect(N, C::Write, "writes files", Some(0))
        }
        "kill" | "terminate" | "send_signal" => Effect(N, C::ProcessKill, "stops a process", None),
        "system" | "popen" => Shell,
        _ => return None,
    })
}

/// Names that, seen in code the grammar rejected, still deserve the destructive flag.
pub(crate) fn is_alarming_name(name: &str) -> bool {
    matches!(
        name,
        "rmtree"
            | "remove"
            | "unlink"
            | "rmdir"
            | "removedirs"
            | "system"
            | "popen"
            | "Popen"
            | "kill"
            | "killpg"
            | "chmod"
            | "chown"
            | "truncate"
    )
}
