//! Decoding, downscaling and re-encoding one picture.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits, RgbImage};
use ironclaw_store::NewImage;

/// The longest side sent: what Anthropic reads without scaling down itself, and more than
/// OpenAI's high-detail tiles use. Larger pictures cost tokens and time for nothing.
pub const MAX_EDGE: u32 = 1568;
/// A bigger file is refused before it is decoded.
pub const MAX_INPUT_BYTES: usize = 20 << 20;
/// Decoding stops past these, so a small file that claims to be huge (a decompression bomb)
/// costs nothing.
const MAX_DECODED_SIDE: u32 = 16_384;
/// And past this many pixels in all: a 57-byte GIF that claims a 6112×11009 screen (found by
/// the `picture` fuzz target) made the decoder fill a 270 MB canvas and the scaler work on it
/// for seconds. 50 million is more than a 48-megapixel camera writes.
const MAX_PIXELS: u64 = 50_000_000;
const MAX_DECODE_ALLOC: u64 = 512 << 20;
/// A PNG larger than this is sent as JPEG instead: a photo compresses ten times better so.
const PNG_UNTIL: usize = 1 << 20;
/// Providers refuse images over 5 MB of base64; this leaves room.
const MAX_OUTPUT_BYTES: usize = 3 << 20;

/// Why a picture was not taken. Each message completes "NAME was not sent: …".
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImageRefused {
    #[error("it is {} MiB; pictures up to {} MiB are taken", .0 >> 20, MAX_INPUT_BYTES >> 20)]
    TooLarge(usize),
    #[error("it is not a PNG, JPEG, GIF or WebP picture ({0})")]
    NotAnImage(String),
    #[error("it is {0}×{1} pixels; up to {MAX_DECODED_SIDE} on a side and {MAX_PIXELS} in all are taken")]
    TooManyPixels(u32, u32),
    #[error("it could not be re-encoded: {0}")]
    Encode(String),
}

/// `bytes` (a file the person gave, or one the code wrote) as the model is sent it: at most
/// [`MAX_EDGE`] on its longer side, PNG (keeps text and lines sharp) unless a JPEG is much
/// smaller, without any of the file's metadata.
pub fn prepare(name: &str, bytes: &[u8]) -> Result<NewImage, ImageRefused> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(ImageRefused::TooLarge(bytes.len()));
    }
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageRefused::NotAnImage(e.to_string()))?;
    match reader.format() {
        Some(ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP) => {}
        Some(other) => return Err(ImageRefused::NotAnImage(format!("{other:?}"))),
        None => return Err(ImageRefused::NotAnImage("unknown format".into())),
    }
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| ImageRefused::NotAnImage(e.to_string()))?;
    if width > MAX_DECODED_SIDE
        || height > MAX_DECODED_SIDE
        || u64::from(width) * u64::from(height) > MAX_PIXELS
    {
        return Err(ImageRefused::TooManyPixels(width, height));
    }
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageRefused::NotAnImage(e.to_string()))?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODED_SIDE);
    limits.max_image_height = Some(MAX_DECODED_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let decoded = reader
        .decode()
        .map_err(|e| ImageRefused::NotAnImage(e.to_string()))?;
    let longest = decoded.width().max(decoded.height());
    // A large picture is first box-averaged to twice the size (fast, and no worse for a
    // reduction), then filtered to the size sent.
    let decoded = if longest > 2 * MAX_EDGE {
        decoded.thumbnail(2 * MAX_EDGE, 2 * MAX_EDGE)
    } else {
        decoded
    };
    let scaled = if longest > MAX_EDGE {
        decoded.resize(MAX_EDGE, MAX_EDGE, FilterType::CatmullRom)
    } else {
        decoded
    };
    let (data, media_type) = encode(&scaled)?;
    Ok(NewImage {
        name: name.to_owned(),
        media_type: media_type.into(),
        width: scaled.width(),
        height: scaled.height(),
        data,
    })
}

fn encode(image: &DynamicImage) -> Result<(Vec<u8>, &'static str), ImageRefused> {
    let mut png = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| ImageRefused::Encode(e.to_string()))?;
    if png.len() <= PNG_UNTIL {
        return Ok((png, "image/png"));
    }
    let flat = on_white(image);
    for quality in [85, 70, 50] {
        let mut jpeg = Vec::new();
        JpegEncoder::new_with_quality(&mut jpeg, quality)
            .encode_image(&flat)
            .map_err(|e| ImageRefused::Encode(e.to_string()))?;
        if jpeg.len() <= MAX_OUTPUT_BYTES {
            return Ok(if png.len() <= jpeg.len() {
                (png, "image/png")
            } else {
                (jpeg, "image/jpeg")
            });
        }
    }
    Err(ImageRefused::Encode(
        "it stays over 3 MiB even as a JPEG of quality 50".into(),
    ))
}

/// JPEG has no transparency: a transparent background becomes white, as a viewer shows it.
fn on_white(image: &DynamicImage) -> RgbImage {
    let rgba = image.to_rgba8();
    let mut out = RgbImage::new(rgba.width(), rgba.height());
    for (x, y, p) in rgba.enumerate_pixels() {
        let a = u32::from(p[3]);
        let mix = |c: u8| ((u32::from(c) * a + 255 * (255 - a)) / 255) as u8;
        out.put_pixel(x, y, image::Rgb([mix(p[0]), mix(p[1]), mix(p[2])]));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use image::{Rgb, RgbaImage};

    use super::*;

    fn png(width: u32, height: u32, noisy: bool) -> Vec<u8> {
        let mut img = RgbImage::new(width, height);
        let mut seed = 7u32;
        for p in img.pixels_mut() {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let v = if noisy { (seed >> 16) as u8 } else { 200 };
            *p = Rgb([v, v / 2, 255 - v]);
        }
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_small_chart_stays_a_png_of_the_same_size() {
        let prepared = prepare("chart.png", &png(640, 480, false)).unwrap();
        assert_eq!(
            (
                prepared.width,
                prepared.height,
                prepared.media_type.as_str()
            ),
            (640, 480, "image/png")
        );
        assert!(prepared.data.starts_with(b"\x89PNG"));
    }

    #[test]
    fn a_large_photo_is_scaled_to_the_long_edge_and_sent_as_jpeg() {
        let prepared = prepare("photo.png", &png(3000, 2000, true)).unwrap();
        assert_eq!((prepared.width, prepared.height), (MAX_EDGE, 1045));
        assert_eq!(prepared.media_type, "image/jpeg");
        assert!(prepared.data.len() <= MAX_OUTPUT_BYTES);
    }

    #[test]
    fn transparency_becomes_white_in_a_jpeg() {
        let flat = on_white(&DynamicImage::ImageRgba8(RgbaImage::from_pixel(
            2,
            2,
            image::Rgba([0, 0, 0, 0]),
        )));
        assert_eq!(flat.get_pixel(0, 0), &Rgb([255, 255, 255]));
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn text_a_bomb_and_an_oversized_file_are_refused_before_decoding() {
        assert!(matches!(
            prepare("notes.png", b"just some text"),
            Err(ImageRefused::NotAnImage(_))
        ));
        // A valid PNG header that claims 100000×100000 pixels.
        let mut bomb = png(1, 1, false);
        bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        // The IHDR chunk's CRC covers its type and data (bytes 12..29).
        let crc = crc32(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(
            prepare("bomb.png", &bomb),
            Err(ImageRefused::TooManyPixels(100_000, 100_000))
        );
        // The fuzz target's find: a tiny GIF whose screen is 6112×11009.
        let gif = [
            0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0xe0, 0x17, 0x01, 0x2b, 0x80, 0xfc, 0xff, 0xff,
            0xff, 0xff, 0xfe, 0xff, 0xff, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c,
            0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x20,
            0x3b,
        ];
        assert_eq!(
            prepare("screen.gif", &gif),
            Err(ImageRefused::TooManyPixels(6112, 11009))
        );
        assert_eq!(
            prepare("big.png", &vec![0; MAX_INPUT_BYTES + 1]),
            Err(ImageRefused::TooLarge(MAX_INPUT_BYTES + 1))
        );
    }
}
