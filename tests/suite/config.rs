//! Policy errors point at the file and the field to fix.

use ironclaw_tests::*;

#[test]
fn bad_user_policy_value_names_the_file_and_the_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = Paths::at(dir.path().join("data"), dir.path().join("config"));
    std::fs::create_dir_all(&paths.config_dir).expect("config dir");
    let file = paths.user_policy_file();
    std::fs::write(&file, "profiles: {standard: {memory: lots}}\n").expect("write");

    let err = Policy::load(&paths).expect_err("`memory: lots` must be rejected");
    let message = err.to_string();
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert!(message.contains("profiles.standard.memory"), "{message}");
}

#[test]
fn valid_user_policy_overrides_only_what_it_sets() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths = Paths::at(dir.path().join("data"), dir.path().join("config"));
    std::fs::create_dir_all(&paths.config_dir).expect("config dir");
    std::fs::write(paths.user_policy_file(), SMALL_LIMITS).expect("write");
    let policy = Policy::load(&paths).expect("valid");
    let (name, p) = policy.profile(None).expect("default profile");
    assert_eq!(name, "standard");
    assert_eq!(p.memory_bytes, 128 << 20);
    assert_eq!(p.pids, 64);
    assert_eq!(p.timeout, std::time::Duration::from_secs(5));
    assert_eq!(p.cpus, 1.0, "untouched fields keep the shipped value");
}
