//! The person's pictures on their way in: decoded and sized off the actor's thread, refused
//! with a reason the person reads, stored with their message.

use base64::Engine as _;
use ironclaw_protocol::ImageInput;
use ironclaw_store::NewImage;

use crate::vision::{self, MAX_IMAGES_PER_MESSAGE};

/// A message waiting for its turn.
pub(super) struct Queued {
    pub text: String,
    pub images: Vec<NewImage>,
    /// Why pictures the person gave were not taken, one line each ("a.heic was not sent: …").
    pub refused: Vec<String>,
}

/// Every picture prepared (see [`vision::prepare`]); the ones that cannot be, each with why.
pub(super) async fn prepare(inputs: Vec<ImageInput>) -> (Vec<NewImage>, Vec<String>) {
    if inputs.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let work = move || {
        let mut taken = Vec::new();
        let mut refused = Vec::new();
        for (i, input) in inputs.into_iter().enumerate() {
            let name = display_name(&input.name);
            if i >= MAX_IMAGES_PER_MESSAGE {
                refused.push(format!(
                    "{name} was not sent: a message takes up to {MAX_IMAGES_PER_MESSAGE} pictures"
                ));
                continue;
            }
            let bytes = match base64::engine::general_purpose::STANDARD.decode(input.data.trim()) {
                Ok(bytes) => bytes,
                Err(e) => {
                    refused.push(format!("{name} was not sent: its data is not base64 ({e})"));
                    continue;
                }
            };
            match vision::prepare(&name, &bytes) {
                Ok(image) => taken.push(image),
                Err(e) => refused.push(format!("{name} was not sent: {e}")),
            }
        }
        (taken, refused)
    };
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        (
            Vec::new(),
            vec![format!(
                "the pictures were not sent: preparing them failed ({e})"
            )],
        )
    })
}

/// The name as shown: its last path part, without control characters, at most 80 characters.
pub(super) fn display_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let clean: String = last.chars().filter(|c| !c.is_control()).take(80).collect();
    if clean.trim().is_empty() {
        "pasted image".into()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_folders_and_control_characters() {
        assert_eq!(display_name("/home/a/Pictures/cat.png"), "cat.png");
        assert_eq!(display_name("evil\u{1b}[31m.png"), "evil[31m.png");
        assert_eq!(display_name(""), "pasted image");
    }

    #[tokio::test]
    async fn a_bad_picture_is_refused_with_its_name_and_the_rest_are_taken() {
        let (taken, refused) = prepare(vec![ImageInput {
            name: "notes.png".into(),
            data: base64::engine::general_purpose::STANDARD.encode(b"not a picture"),
        }])
        .await;
        assert!(taken.is_empty());
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].starts_with("notes.png was not sent: it is not a PNG"),
            "{refused:?}"
        );
    }
}
