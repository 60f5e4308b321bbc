use pretty_assertions::assert_eq;

use super::*;

const SAMPLE: &str = r#"
use tauri::State;

type Res<T> = Result<T, CommandError>;

/// Reads one thing.
///
/// Second paragraph with a */ in it.
#[tauri::command]
pub async fn read_thing(desktop: State<'_, Desktop>, id: ThingId, path: &str) -> Res<Vec<Thing>> {
    todo!()
}

#[tauri::command]
pub fn watch(app: AppHandle, on_change: Channel<Change>, since: Option<u64>) {}

/// Not a command: no attribute.
pub fn helper() {}
"#;

fn sample() -> Generated {
    Generated::from_sources(&[Source {
        module: "commands".into(),
        text: SAMPLE.into(),
    }])
    .unwrap()
}

#[test]
fn commands_are_read_with_their_wire_arguments_only() {
    let g = sample();
    assert_eq!(g.names(), ["read_thing", "watch"]);
    let read = &g.commands[0];
    assert_eq!(read.path, "commands::read_thing");
    assert_eq!(
        read.args,
        [
            Arg {
                name: "id".into(),
                ty: Ty::Named("ThingId".into())
            },
            Arg {
                name: "path".into(),
                ty: Ty::String
            },
        ]
    );
    assert_eq!(read.returns, Ty::Vec(Box::new(Ty::Named("Thing".into()))));
    assert_eq!(g.commands[1].returns, Ty::Void);
    assert_eq!(
        g.binding_types().into_iter().collect::<Vec<_>>(),
        ["Change", "Thing", "ThingId"]
    );
}

#[test]
fn the_handler_and_the_capability_name_every_command() {
    let g = sample();
    assert_eq!(
        g.handler(),
        "tauri::generate_handler![\n    commands::read_thing,\n    commands::watch,\n]\n"
    );
    let cap: serde_json::Value = serde_json::from_str(&g.capability()).unwrap();
    assert_eq!(
        cap["permissions"],
        serde_json::json!([
            "core:event:allow-listen",
            "core:event:allow-unlisten",
            "allow-read-thing",
            "allow-watch"
        ])
    );
    assert_eq!(cap["windows"], serde_json::json!(["main"]));
}

#[test]
fn the_typescript_is_typed_documented_and_calls_by_the_rust_names() {
    let ts = sample().typescript();
    for expected in [
        "import { Channel, invoke } from \"@tauri-apps/api/core\";",
        "import type { ThingId } from \"../bindings/ThingId\";",
        "   * Reads one thing.\n   *\n   * Second paragraph with a *\\/ in it.\n   */",
        "  readThing(id: ThingId, path: string): Promise<Thing[]>;",
        "  watch(onChange: (message: Change) => void, since?: number | null): Promise<void>;",
        "  readThing: (id, path) => invoke<Thing[]>(\"read_thing\", { id, path }),",
        "  watch: (onChange, since) => invoke<void>(\"watch\", { onChange: channel(onChange), since }),",
        "export const COMMAND_NAMES = [\n  \"read_thing\",\n  \"watch\",\n] as const;",
    ] {
        assert!(ts.contains(expected), "missing {expected:?} in:\n{ts}");
    }
}

#[test]
fn a_type_typescript_cannot_name_is_a_build_error_that_says_which() {
    let src = "#[tauri::command]\npub fn f(x: HashMap<String, u8>) {}";
    let err = Generated::from_sources(&[Source {
        module: "commands".into(),
        text: src.into(),
    }])
    .err()
    .expect("an unsupported type is refused");
    let message = err.to_string();
    assert!(
        message.contains("`f`") && message.contains("`x`"),
        "{message}"
    );
}

#[test]
fn a_private_or_duplicate_command_is_refused() {
    let private = "#[tauri::command]\nfn f() {}";
    assert!(matches!(
        Generated::from_sources(&[Source {
            module: "commands".into(),
            text: private.into()
        }]),
        Err(GenError::Shape { .. })
    ));
    let twice = "#[tauri::command]\npub fn f() {}";
    let sources = [
        Source {
            module: "commands".into(),
            text: twice.into(),
        },
        Source {
            module: "commands::other".into(),
            text: twice.into(),
        },
    ];
    assert!(matches!(
        Generated::from_sources(&sources),
        Err(GenError::Duplicate(name)) if name == "f"
    ));
}

/// Rewrites the committed generated files from the app's real commands, like `build.rs` does,
/// so `scripts/check-bindings.sh` can diff them without building the GUI app.
#[test]
fn write_generated_files() {
    let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let g = Generated::from_app(&app).unwrap();
    assert!(g.names().contains(&"decide".to_owned()));
    for (path, contents) in g.committed_files() {
        write_if_changed(&app.join(path), &contents).unwrap();
    }
}
