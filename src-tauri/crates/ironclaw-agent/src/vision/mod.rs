//! Pictures for the model: the person's (pasted or attached) and the ones a tool shows (a
//! chart the code drew). Every picture is decoded, downscaled and re-encoded here before a
//! model sees it or the history keeps it, so what is sent is small, is one of two formats every
//! provider takes, and carries none of the original file's metadata (a photo's GPS position).

mod prepare;

use base64::Engine as _;
use ironclaw_llm::Message;
use ironclaw_store::NewImage;

pub use prepare::{prepare, ImageRefused, MAX_EDGE, MAX_INPUT_BYTES};

/// More than this many pictures in one message are left out (with a note): each costs about
/// as much as a page of text, and providers cap the count per request.
pub const MAX_IMAGES_PER_MESSAGE: usize = 8;

/// The stored picture as a provider takes it.
pub fn for_model(image: &NewImage) -> ironclaw_llm::Image {
    ironclaw_llm::Image {
        media_type: image.media_type.clone(),
        data: base64::engine::general_purpose::STANDARD.encode(&image.data),
    }
}

/// " [2 images]", said where a picture cannot be (a summary's input, a cut transcript).
pub fn images_note(count: usize) -> String {
    match count {
        0 => String::new(),
        1 => " [1 image]".into(),
        n => format!(" [{n} images]"),
    }
}

/// A message's text and pictures, for the kinds that carry pictures.
fn text_and_images(message: &mut Message) -> Option<(&mut String, &mut Vec<ironclaw_llm::Image>)> {
    match message {
        Message::User {
            content, images, ..
        }
        | Message::Tool {
            content, images, ..
        } => Some((content, images)),
        Message::Assistant { .. } => None,
    }
}

/// Drops a message's pictures, saying so in its text, to make room in the context window.
/// Whether there were any.
pub fn leave_out_images(message: &mut Message) -> bool {
    let Some((content, images)) = text_and_images(message) else {
        return false;
    };
    if images.is_empty() {
        return false;
    }
    let n = images.len();
    images.clear();
    content.push_str(&format!(
        "\n[IronClaw note: {} left out here to fit the context window; ask to see it again if \
         you need it]",
        if n == 1 {
            "an image was".to_string()
        } else {
            format!("{n} images were")
        }
    ));
    true
}

/// The transcript for a model that reads no images: each picture becomes a note in its
/// message's text, so the model knows one was there and can say so.
pub fn without_images(mut messages: Vec<Message>, model: &str) -> Vec<Message> {
    for message in &mut messages {
        let Some((content, images)) = text_and_images(message) else {
            continue;
        };
        if images.is_empty() {
            continue;
        }
        let n = images.len();
        images.clear();
        content.push_str(&format!(
            "\n[IronClaw note: {} here, but the model in use ({model}) does not read images, so \
             {} not sent. Say so if it matters; the person can switch to a model that reads \
             images.]",
            if n == 1 {
                "an image was attached".to_string()
            } else {
                format!("{n} images were attached")
            },
            if n == 1 { "it was" } else { "they were" },
        ));
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaving_out_images_says_so_in_the_text() {
        let mut m = Message::User {
            content: "look".into(),
            images: vec![ironclaw_llm::Image {
                media_type: "image/png".into(),
                data: "AA==".into(),
            }],
        };
        assert!(leave_out_images(&mut m));
        assert!(m.images().is_empty());
        let Message::User { content, .. } = &m else {
            panic!("still a user message")
        };
        assert!(content.starts_with("look\n[IronClaw note: an image was left out"));
        assert!(!leave_out_images(&mut m), "nothing left to leave out");
    }
}
