//! The symlink race: sandboxed code swaps an image folder and a full log for links to host
//! files in a tight loop while the app reads them thousands of times. The reader must never
//! return one host byte (nor list a host folder), and the test proves the swapping really ran
//! and really hit the reader.

use ironclaw_protocol::{AgentEvent, Decision, OutputStream};
use ironclaw_tests::agent::{asks_to_run, says, EVENT_GUARD};

use super::App;

/// Reads of each kind while the code swaps (the issue's leak showed within ~10,000 reads at a
/// rate of one in a few hundred).
const READS: usize = 3000;
/// The shortest time the reads go on while the code swaps.
const MIN_RACE: std::time::Duration = std::time::Duration::from_secs(3);

const SETUP: &str = "import os, sys\n\
os.makedirs('/workspace/imgs')\n\
open('/workspace/imgs/a.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + b'inside')\n\
sys.stdout.write('inside-log\\n' + 'x' * (2 << 20))";

fn swapper(log: &str, host_dir: &str, host_log: &str) -> String {
    format!(
        r#"import os, time
os.chdir('/workspace')
L = '.ironclaw/logs/{log}'
open('started', 'w').close()
swaps, deadline = 0, time.monotonic() + 25
while not os.path.exists('stop') and time.monotonic() < deadline:
    os.rename('imgs', 'imgs.real'); os.symlink('{host_dir}', 'imgs')
    os.unlink('imgs'); os.rename('imgs.real', 'imgs')
    os.rename(L, L + '.real'); os.symlink('{host_log}', L)
    os.unlink(L); os.rename(L + '.real', L)
    swaps += 1
print('swaps', swaps, 'stopped' if os.path.exists('stop') else 'deadline')
"#
    )
}

#[derive(Debug, Default)]
struct Tally {
    image_ok: usize,
    image_refused: usize,
    log_ok: usize,
    log_refused: usize,
    listings: usize,
    leaks: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapping_an_image_folder_and_a_log_for_links_to_host_files_never_leaks_a_host_byte() {
    let mut app = App::start().await;
    app.open().await;
    app.push_all([asks_to_run("c1", "python", SETUP), says("Set up.")]);
    app.send("set up").await;
    let req = app.approval_request().await;
    app.desktop
        .decide(
            app.conversation,
            req.approval_id,
            req.code_hash,
            Decision::ApproveOnce,
            true,
        )
        .await
        .expect("decide");
    app.turn_end().await;
    let id = app.conversation;
    let loud = app
        .seen
        .iter()
        .find_map(|e| match e {
            AgentEvent::ExecutionEnded { execution_id, .. } => Some(*execution_id),
            _ => None,
        })
        .expect("the set-up run ended");
    let recorded = app
        .desktop
        .history()
        .get_execution(loud)
        .expect("execution")
        .log_path
        .expect("2 MiB of output leaves a full log");
    let log = std::path::Path::new(&recorded)
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();

    // The host files the links point at: a valid PNG and a log line, both carrying a marker
    // no workspace file has, and a host folder entry named after it.
    let host = tempfile::tempdir().expect("host dir");
    let marker = format!("HOST-SECRET-{}-{}", std::process::id(), id);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(marker.as_bytes());
    std::fs::write(host.path().join("a.png"), &png).expect("host png");
    std::fs::write(host.path().join(format!("{marker}.txt")), "x").expect("host entry");
    let host_log = host.path().join("secret.log");
    std::fs::write(&host_log, format!("{marker}\n").repeat(100)).expect("host log");

    let inside_url = app
        .desktop
        .read_workspace_image(id, "imgs/a.png")
        .expect("the real image");
    let inside_page = app
        .desktop
        .read_log(loud, OutputStream::Stdout, 0, 64)
        .expect("the real log")
        .text;
    assert!(inside_page.starts_with("inside-log"), "{inside_page:?}");

    let code = swapper(
        &log,
        &host.path().display().to_string(),
        &host_log.display().to_string(),
    );
    app.push_all([asks_to_run("c2", "python", &code), says("Swapped.")]);
    app.send("swap").await;
    let req = app.approval_request().await;
    app.desktop
        .decide(
            id,
            req.approval_id,
            req.code_hash,
            Decision::ApproveOnce,
            true,
        )
        .await
        .expect("decide");
    let workspace = app.desktop.workspace_dir(id).expect("workspace");
    let deadline = tokio::time::Instant::now() + EVENT_GUARD;
    while !workspace.join("started").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the swap loop never started; events:\n{:#?}",
            app.seen
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let desktop = app.desktop.clone();
    let secret = marker.clone();
    let tally = tokio::task::spawn_blocking(move || {
        let mut t = Tally::default();
        // At least READS reads of each kind, and for at least MIN_RACE: on a fast machine the
        // reads alone end before the loop has swapped often enough to prove anything.
        let started = std::time::Instant::now();
        let mut i = 0;
        while i < READS || started.elapsed() < MIN_RACE {
            i += 1;
            match desktop.read_workspace_image(id, "imgs/a.png") {
                Ok(url) if url == inside_url => t.image_ok += 1,
                Ok(url) => t.leaks.push(format!("image: {url}")),
                Err(_) => t.image_refused += 1,
            }
            match desktop.read_log(loud, OutputStream::Stdout, 0, 64) {
                Ok(page) if page.text == inside_page && !page.text.contains(&secret) => {
                    t.log_ok += 1
                }
                Ok(page) => t.leaks.push(format!("log: {:?}", page.text)),
                Err(_) => t.log_refused += 1,
            }
            if i % 20 == 0 {
                let listing = desktop.list_workspace(id).expect("list");
                t.listings += 1;
                t.leaks.extend(
                    listing
                        .into_iter()
                        .filter(|e| e.path.contains(&secret))
                        .map(|e| format!("listing: {}", e.path)),
                );
            }
        }
        t
    })
    .await
    .expect("reader thread");
    std::fs::write(workspace.join("stop"), "").expect("stop the loop");
    app.turn_end().await;

    let out = app.stdout();
    // The set-up run's output ends without a newline, so the count may share its line.
    let last = out
        .rfind("swaps ")
        .map(|at| out[at..].trim_end().to_string())
        .unwrap_or_default();
    let swaps: usize = last
        .strip_prefix("swaps ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no swap count in the output: {out:?}"));
    // The attack ran, for the whole time the host read, and really reached the reader.
    assert!(
        last.ends_with("stopped"),
        "the loop ended before the reads did: {last}"
    );
    eprintln!("{swaps} swaps during the reads: {tally:?}");
    assert!(swaps >= 1000, "only {swaps} swaps: {tally:?}");
    assert!(
        tally.image_refused > 0 && tally.log_refused > 0,
        "no read ever met a swapped link, so the race was not exercised: {tally:?}"
    );
    assert!(
        tally.image_ok > 0 && tally.log_ok > 0,
        "the reader must still read the real files between swaps: {tally:?}"
    );
    assert!(
        tally.leaks.is_empty(),
        "{} host reads leaked ({swaps} swaps): {:?}",
        tally.leaks.len(),
        &tally.leaks[..tally.leaks.len().min(3)]
    );
}
