#![allow(clippy::unwrap_used)]

use super::*;
use pretty_assertions::assert_eq;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn defaults_path() -> &'static Path {
    Path::new("/opt/ironclaw/config/sandbox.yaml")
}

fn user_path() -> &'static Path {
    Path::new("/home/me/.config/ironclaw/sandbox.yaml")
}

fn with_user(user_yaml: &str) -> Result<Policy> {
    Policy::parse(
        (DEFAULT_POLICY_YAML, defaults_path()),
        Some((user_yaml, user_path())),
    )
}

fn user_error(user_yaml: &str) -> String {
    match with_user(user_yaml) {
        Ok(policy) => panic!("expected an error for {user_yaml:?}, got {policy:#?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "{message:?} should mention {part:?}"
        );
    }
}

fn shipped_profiles() -> BTreeMap<String, Profile> {
    let profile =
        |cpus, memory_bytes, pids, timeout_secs, tmpfs, nofile, fsize_bytes, workspace| Profile {
            cpus,
            memory_bytes,
            pids,
            timeout: Duration::from_secs(timeout_secs),
            tmp_bytes: tmpfs,
            home_bytes: tmpfs,
            nofile,
            fsize_bytes,
            network: NetworkMode::None,
            runtime: Runtime::Runc,
            workspace,
        };
    let quota = |bytes, files, keep_free| WorkspaceQuota {
        bytes,
        files,
        keep_free,
    };
    BTreeMap::from([
        (
            "strict".to_string(),
            profile(
                0.5,
                256 * MIB,
                64,
                30,
                32 * MIB,
                256,
                64 * MIB,
                quota(256 * MIB, 10_000, 2 * GIB),
            ),
        ),
        (
            "standard".to_string(),
            profile(
                1.0,
                GIB,
                256,
                120,
                256 * MIB,
                1024,
                GIB,
                quota(4 * GIB, 100_000, 2 * GIB),
            ),
        ),
        (
            "trusted".to_string(),
            profile(
                2.0,
                4 * GIB,
                1024,
                1800,
                GIB,
                4096,
                8 * GIB,
                quota(32 * GIB, 1_000_000, GIB),
            ),
        ),
    ])
}

#[test]
fn shipped_defaults_parse_into_the_three_documented_profiles() {
    let policy = Policy::parse((DEFAULT_POLICY_YAML, defaults_path()), None).unwrap();
    let expected = Policy {
        default_profile: "standard".into(),
        idle_timeout: Duration::from_secs(30 * 60),
        warm_spare: true,
        capture_bytes: MIB,
        undo_keep_bytes: 2 * GIB,
        undo_keep_total_bytes: 10 * GIB,
        profiles: shipped_profiles(),
        network: NetworkPolicy::default(),
        sources: vec![defaults_path().to_path_buf()],
    };
    assert_eq!(policy, expected);
}

#[test]
fn the_undo_history_cap_is_set_in_sandbox_yaml_and_checked() {
    assert_eq!(
        with_user("undo: { keep: 500m }\n").unwrap().undo_keep_bytes,
        500 * MIB
    );
    let err = with_user("undo: { kept: 5g }\n").unwrap_err().to_string();
    assert!(
        err.contains("undo.kept") && err.contains("expected `keep`"),
        "{err}"
    );
    let err = with_user("undo: { keep: lots }\n").unwrap_err().to_string();
    assert!(err.contains("undo"), "{err}");
    let both = with_user("undo: { keep: 1g, keep_total: 3g }\n").unwrap();
    assert_eq!(
        (both.undo_keep_bytes, both.undo_keep_total_bytes),
        (GIB, 3 * GIB)
    );
    // One set, the other as shipped.
    assert_eq!(
        with_user("undo: { keep_total: 4g }\n")
            .unwrap()
            .undo_keep_bytes,
        2 * GIB
    );
}

#[test]
fn user_override_of_one_field_keeps_the_other_fields() {
    let policy =
        with_user("profiles:\n  standard:\n    memory: 2g\n    tmpfs: { tmp: 512m }\n").unwrap();
    let mut expected = shipped_profiles();
    let standard = expected.get_mut("standard").unwrap();
    standard.memory_bytes = 2 * GIB;
    standard.tmp_bytes = 512 * MIB;
    assert_eq!(policy.profiles, expected);
    assert_eq!(policy.default_profile, "standard");
    assert_eq!(
        policy.sources,
        vec![defaults_path().to_path_buf(), user_path().to_path_buf()]
    );
}

#[test]
fn user_top_level_scalars_replace_the_defaults() {
    let policy =
        with_user("default_profile: strict\nidle_timeout: 1h30m\noutput: { capture: 256k }\n")
            .unwrap();
    assert_eq!(
        (
            policy.default_profile.as_str(),
            policy.idle_timeout,
            policy.capture_bytes
        ),
        ("strict", Duration::from_secs(5400), 256 * 1024)
    );
    assert_eq!(policy.profiles, shipped_profiles());
}

#[test]
fn user_added_profile_works_and_can_be_the_default() {
    let policy = with_user(
        "default_profile: gvisor\n\
         profiles:\n  gvisor:\n    cpus: 1.5\n    memory: 1.5g\n    pids: 128\n    timeout: 90\n    \
         tmpfs: { tmp: 64m, home: 128m }\n    ulimits: { nofile: 512, fsize: 100m }\n    \
         network: none\n    runtime: runsc\n    \
         workspace: { bytes: 10g, files: 5000, keep_free: 512m }\n",
    )
    .unwrap();
    let expected = Profile {
        cpus: 1.5,
        memory_bytes: 3 * GIB / 2,
        pids: 128,
        timeout: Duration::from_secs(90),
        tmp_bytes: 64 * MIB,
        home_bytes: 128 * MIB,
        nofile: 512,
        fsize_bytes: 100 * MIB,
        network: NetworkMode::None,
        runtime: Runtime::Runsc,
        workspace: WorkspaceQuota {
            bytes: 10 * GIB,
            files: 5000,
            keep_free: 512 * MIB,
        },
    };
    let (name, profile) = policy.profile(None).unwrap();
    assert_eq!((name, profile), ("gvisor", &expected));
    assert_eq!(policy.profiles.len(), 4);
}

#[test]
fn user_file_may_use_anchors_and_merge_keys_to_derive_a_profile() {
    let policy = with_user(
        "profiles:\n  big: &big\n    cpus: 4\n    memory: 8g\n    pids: 2048\n    timeout: 1h\n    \
         tmpfs: { tmp: 1g, home: 1g }\n    ulimits: { nofile: 4096, fsize: 8g }\n    network: none\n    runtime: runc\n    \
         workspace: { bytes: 8g, files: 100000, keep_free: 1g }\n  \
         big-gvisor:\n    <<: *big\n    runtime: runsc\n",
    )
    .unwrap();
    assert_eq!(policy.profiles["big-gvisor"].runtime, Runtime::Runsc);
    assert_eq!(policy.profiles["big-gvisor"].memory_bytes, 8 * GIB);
}

#[test]
fn empty_user_file_and_empty_sections_change_nothing() {
    let defaults = Policy::parse((DEFAULT_POLICY_YAML, defaults_path()), None).unwrap();
    for user in [
        "",
        "# all commented out\n",
        "profiles:\n",
        "profiles:\n  standard:\n",
        "output:\n",
    ] {
        let policy = with_user(user).unwrap();
        assert_eq!(policy.profiles, defaults.profiles, "{user:?}");
        assert_eq!(policy.capture_bytes, defaults.capture_bytes, "{user:?}");
    }
}

#[test]
fn unknown_key_is_rejected_naming_it_and_listing_the_expected_keys() {
    let message = user_error("profiles:\n  standard:\n    memroy: 2g\n");
    assert_mentions(
        &message,
        &[
            &user_path().display().to_string(),
            "profiles.standard.memroy",
            "unknown field `memroy`",
            "`memory`",
            "`cpus`",
        ],
    );
}

#[test]
fn hardening_cannot_be_configured_because_no_field_exists_for_it() {
    for (yaml, field) in [
        (
            "profiles:\n  standard:\n    privileged: true\n",
            "profiles.standard.privileged",
        ),
        (
            "profiles:\n  standard:\n    read_only: false\n",
            "profiles.standard.read_only",
        ),
        (
            "profiles:\n  standard:\n    cap_add: [SYS_ADMIN]\n",
            "profiles.standard.cap_add",
        ),
        (
            "profiles:\n  standard:\n    seccomp: unconfined\n",
            "profiles.standard.seccomp",
        ),
        (
            "profiles:\n  standard:\n    swap: 1g\n",
            "profiles.standard.swap",
        ),
        (
            "profiles:\n  standard:\n    mounts: [/:/host]\n",
            "profiles.standard.mounts",
        ),
        ("docker_socket: true\n", "docker_socket"),
    ] {
        assert_mentions(
            &user_error(yaml),
            &[&user_path().display().to_string(), field, "unknown field"],
        );
    }
}

#[test]
fn each_bad_value_names_the_user_file_the_field_and_what_is_allowed() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "profiles: { strict: { pids: many } }",
            "profiles.strict.pids",
            &["\"many\"", "whole number of at least 16"],
        ),
        (
            "profiles: { strict: { pids: 8 } }",
            "profiles.strict.pids",
            &["at least 16"],
        ),
        (
            "profiles: { standard: { memory: 12xb } }",
            "profiles.standard.memory",
            &["12xb", "512m, 2g or 1.5g"],
        ),
        (
            "profiles: { standard: { memory: 8m } }",
            "profiles.standard.memory",
            &["at least 16m"],
        ),
        (
            "profiles: { standard: { cpus: 0 } }",
            "profiles.standard.cpus",
            &["at least 0.01"],
        ),
        (
            "profiles: { standard: { cpus: -1.5 } }",
            "profiles.standard.cpus",
            &["at least 0.01"],
        ),
        (
            "profiles: { standard: { cpus: two } }",
            "profiles.standard.cpus",
            &["number of CPUs"],
        ),
        (
            "profiles: { standard: { timeout: 0s } }",
            "profiles.standard.timeout",
            &["at least 1s", "1h30m"],
        ),
        (
            "profiles: { standard: { timeout: soon } }",
            "profiles.standard.timeout",
            &["30s, 5m or 1h30m"],
        ),
        (
            "profiles: { standard: { tmpfs: { tmp: 0 } } }",
            "profiles.standard.tmpfs.tmp",
            &["greater than 0"],
        ),
        (
            "profiles: { standard: { tmpfs: 64m } }",
            "profiles.standard.tmpfs",
            &["tmp and home"],
        ),
        (
            "profiles: { standard: { tmpfs: { var: 1m } } }",
            "profiles.standard.tmpfs.var",
            &["`tmp`", "`home`"],
        ),
        (
            "profiles: { standard: { ulimits: { fsize: big } } }",
            "profiles.standard.ulimits.fsize",
            &["512m"],
        ),
        (
            "profiles: { standard: { ulimits: { nofile: 2 } } }",
            "profiles.standard.ulimits.nofile",
            &["at least 16"],
        ),
        (
            "profiles: { standard: { network: bridge } }",
            "profiles.standard.network",
            &["`bridge`", "`none`"],
        ),
        (
            "profiles: { standard: { runtime: kata } }",
            "profiles.standard.runtime",
            &["`kata`", "`auto`, `runc`"],
        ),
        (
            "profiles: { standard: 5 }",
            "profiles.standard",
            &["a profile: a mapping of cpus, memory"],
        ),
        ("profiles: 5", "profiles", &["a map"]),
        (
            "idle_timeout: forever",
            "idle_timeout",
            &["30s, 5m or 1h30m"],
        ),
        (
            "output: { capture: lots }",
            "output.capture",
            &["512m, 2g or 1.5g"],
        ),
        (
            "default_profile: paranoid",
            "default_profile",
            &["\"paranoid\"", "standard, strict, trusted"],
        ),
        (
            "profiles: { mine: { cpus: 1 } }",
            "profiles.mine",
            &["missing field", "every profile sets all of cpus, memory"],
        ),
        (
            "profiles: { \"my profile\": { cpus: 1 } }",
            "profiles.my profile",
            &["invalid profile name", "letters, digits"],
        ),
    ];
    for (yaml, field, allowed) in cases {
        let message = user_error(yaml);
        let file_and_field = format!("{}: {field}: ", user_path().display());
        assert_mentions(&message, &[&file_and_field]);
        assert_mentions(&message, allowed);
    }
}

#[test]
fn yaml_syntax_error_names_the_file_line_and_column() {
    let message = user_error("profiles:\n  standard: { memory: 2g\n  strict: {}\n");
    assert_mentions(
        &message,
        &[
            &user_path().display().to_string(),
            "(YAML syntax)",
            "line 3 column",
        ],
    );
    let duplicate = user_error("default_profile: strict\ndefault_profile: trusted\n");
    assert_mentions(
        &duplicate,
        &[
            "(YAML syntax)",
            "duplicate entry with key \"default_profile\"",
            "line 1 column 1",
        ],
    );
}

#[test]
fn user_file_that_is_not_a_mapping_is_rejected() {
    assert_mentions(
        &user_error("- strict\n"),
        &[
            &user_path().display().to_string(),
            "(top level)",
            "profiles",
        ],
    );
}

#[test]
fn bad_value_from_the_shipped_defaults_blames_the_defaults_file() {
    let broken = DEFAULT_POLICY_YAML.replace("pids: 64", "pids: sixty-four");
    let err = Policy::parse(
        (&broken, defaults_path()),
        Some(("profiles: { standard: { cpus: 2 } }", user_path())),
    )
    .unwrap_err()
    .to_string();
    assert_mentions(
        &err,
        &[&format!(
            "{}: profiles.strict.pids: ",
            defaults_path().display()
        )],
    );

    let unparsable = Policy::parse(("profiles: [", defaults_path()), None)
        .unwrap_err()
        .to_string();
    assert_mentions(
        &unparsable,
        &[&defaults_path().display().to_string(), "(YAML syntax)"],
    );
}

#[test]
fn user_value_overriding_a_good_default_is_blamed_on_the_user_file() {
    let message = user_error("profiles: { trusted: { runtime: docker } }");
    assert!(
        message.starts_with(&user_path().display().to_string()),
        "{message}"
    );
}

#[test]
fn profile_lookup_defaults_finds_by_name_and_lists_profiles_when_unknown() {
    let policy = Policy::parse((DEFAULT_POLICY_YAML, defaults_path()), None).unwrap();
    assert_eq!(policy.profile(None).unwrap().0, "standard");
    assert_eq!(
        policy.profile(Some("strict")).unwrap(),
        ("strict", &shipped_profiles()["strict"])
    );
    let message = policy.profile(Some("yolo")).unwrap_err().to_string();
    assert_mentions(&message, &["\"yolo\"", "standard, strict, trusted"]);
    assert!(matches!(
        policy.profile(Some("yolo")),
        Err(Error::Config { .. })
    ));
}

#[test]
fn runtime_docker_names_match_the_yaml_names() {
    assert_eq!(
        [
            Runtime::Runc.as_docker_name(),
            Runtime::Runsc.as_docker_name()
        ],
        ["runc", "runsc"]
    );
}

#[test]
fn field_lists_in_messages_match_the_structs() {
    // serde lists the real fields in its unknown-field message; our hand-written lists must agree.
    for (yaml, fields) in [
        ("nope: 1", TOP_FIELDS),
        ("output: { nope: 1 }", OUTPUT_FIELDS),
        ("profiles: { strict: { nope: 1 } }", PROFILE_FIELDS),
        ("profiles: { strict: { tmpfs: { nope: 1 } } }", TMPFS_FIELDS),
        (
            "profiles: { strict: { ulimits: { nope: 1 } } }",
            ULIMITS_FIELDS,
        ),
        (
            "profiles: { strict: { workspace: { nope: 1 } } }",
            WORKSPACE_FIELDS,
        ),
    ] {
        let message = user_error(yaml);
        let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
        let listed = message.split("expected ").nth(1).unwrap();
        let listed = listed.trim_start_matches("one of ");
        assert_eq!(listed.replace(" or ", ", "), quoted.join(", "), "{yaml}");
    }
}

#[test]
fn load_uses_defaults_when_the_user_file_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::load(&Paths::at(
        dir.path().join("data"),
        dir.path().join("config"),
    ))
    .unwrap();
    assert_eq!(policy.profiles, shipped_profiles());
    assert_eq!(policy.sources, vec![PathBuf::from(BUILT_IN_DEFAULTS)]);
}

#[test]
fn the_defaults_compiled_in_as_json_read_as_the_shipped_yaml() {
    // `load` reads the defaults from the JSON `build.rs` made of `config/sandbox.yaml`; what it
    // yields, alone and under a user file, must be what reading that YAML yields.
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::at(dir.path().join("data"), dir.path());
    let built_in = Path::new(BUILT_IN_DEFAULTS);
    let from_yaml = Policy::parse((DEFAULT_POLICY_YAML, built_in), None).unwrap();
    assert_eq!(Policy::load(&paths).unwrap(), from_yaml);
    let user = "default_profile: strict\nprofiles:\n  strict:\n    memory: 300m\n";
    std::fs::write(paths.user_policy_file(), user).unwrap();
    let merged = Policy::parse(
        (DEFAULT_POLICY_YAML, built_in),
        Some((user, paths.user_policy_file().as_path())),
    )
    .unwrap();
    assert_eq!(merged.default_profile, "strict", "test premise");
    assert_eq!(Policy::load(&paths).unwrap(), merged);
}

#[test]
fn load_merges_the_user_file_from_the_config_dir() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::at(dir.path().join("data"), dir.path());
    std::fs::write(paths.user_policy_file(), "default_profile: trusted\n").unwrap();
    let policy = Policy::load(&paths).unwrap();
    assert_eq!(policy.default_profile, "trusted");
    assert_eq!(
        policy.sources,
        vec![PathBuf::from(BUILT_IN_DEFAULTS), paths.user_policy_file()]
    );

    std::fs::write(paths.user_policy_file(), "default_profile: nope\n").unwrap();
    let message = Policy::load(&paths).unwrap_err().to_string();
    assert_mentions(
        &message,
        &[&format!(
            "{}: default_profile: ",
            paths.user_policy_file().display()
        )],
    );
}

#[test]
fn load_fails_on_an_unreadable_user_file() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::at(dir.path().join("data"), dir.path());
    std::fs::create_dir(paths.user_policy_file()).unwrap(); // a folder cannot be read as a file
    let message = Policy::load(&paths).unwrap_err().to_string();
    assert_mentions(
        &message,
        &[
            &paths.user_policy_file().display().to_string(),
            "cannot read it",
        ],
    );

    std::fs::remove_dir(paths.user_policy_file()).unwrap();
    std::fs::write(paths.user_policy_file(), b"default_profile: \xff\n").unwrap();
    let message = Policy::load(&paths).unwrap_err().to_string();
    assert_mentions(
        &message,
        &[
            &paths.user_policy_file().display().to_string(),
            "cannot read it",
        ],
    );
}

#[cfg(unix)]
#[test]
fn load_fails_on_a_dangling_symlink_instead_of_ignoring_it() {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::at(dir.path().join("data"), dir.path());
    std::os::unix::fs::symlink(dir.path().join("gone.yaml"), paths.user_policy_file()).unwrap();
    let message = Policy::load(&paths).unwrap_err().to_string();
    assert_mentions(
        &message,
        &[
            &paths.user_policy_file().display().to_string(),
            "cannot read it",
        ],
    );
}

#[test]
fn workspace_quota_values_below_their_minimum_are_rejected_naming_the_field() {
    for (yaml, field, accepted) in [
        (
            "profiles: { standard: { workspace: { bytes: 512k } } }",
            "profiles.standard.workspace.bytes",
            "at least 1m",
        ),
        (
            "profiles: { standard: { workspace: { files: 3 } } }",
            "profiles.standard.workspace.files",
            "at least 16",
        ),
        (
            "profiles: { standard: { workspace: { keep_free: 0 } } }",
            "profiles.standard.workspace.keep_free",
            "greater than 0",
        ),
        (
            "profiles: { standard: { workspace: { bytes: lots } } }",
            "profiles.standard.workspace.bytes",
            "like 512m",
        ),
    ] {
        let message = user_error(yaml);
        assert_mentions(
            &message,
            &[&user_path().display().to_string(), field, accepted],
        );
    }
}

#[test]
fn a_new_profile_without_a_workspace_quota_is_rejected_saying_what_to_add() {
    let message = user_error(
        "profiles:\n  mine:\n    cpus: 1\n    memory: 1g\n    pids: 64\n    timeout: 10s\n    \
         tmpfs: { tmp: 64m, home: 64m }\n    ulimits: { nofile: 64, fsize: 1m }\n    \
         network: none\n    runtime: runc\n",
    );
    assert_mentions(
        &message,
        &["profiles.mine", "missing field `workspace`", "workspace"],
    );
    let message = user_error(
        "profiles:\n  mine:\n    cpus: 1\n    memory: 1g\n    pids: 64\n    timeout: 10s\n    \
         tmpfs: { tmp: 64m, home: 64m }\n    ulimits: { nofile: 64, fsize: 1m }\n    \
         network: none\n    runtime: runc\n    workspace: { bytes: 1g }\n",
    );
    assert_mentions(
        &message,
        &[
            "profiles.mine.workspace",
            "missing field `files`",
            "workspace needs bytes, files, keep_free",
        ],
    );
}

#[test]
fn the_runtime_override_sets_every_profile_and_names_itself_when_wrong() {
    let mut policy = Policy::parse((DEFAULT_POLICY_YAML, Path::new("sandbox.yaml")), None).unwrap();
    policy.override_runtime("strict").unwrap();
    assert!(policy
        .profiles
        .values()
        .all(|p| p.runtime == Runtime::Runsc));
    policy.override_runtime(" Auto ").unwrap();
    assert!(policy.profiles.values().all(|p| p.runtime == Runtime::Auto));
    let message = policy.override_runtime("kata").unwrap_err().to_string();
    assert!(
        message.contains("IRONCLAW_RUNTIME") && message.contains("auto, runc or runsc"),
        "{message}"
    );
}

#[test]
fn auto_takes_gvisor_only_where_registered_and_runsc_requires_it() {
    assert_eq!(Runtime::Auto.resolve(true), Some(Runtime::Runsc));
    assert_eq!(Runtime::Auto.resolve(false), Some(Runtime::Runc));
    assert_eq!(Runtime::Runsc.resolve(false), None);
    assert_eq!(Runtime::Runc.resolve(true), Some(Runtime::Runc));
}
