//! The pending count drawn onto the tray icon: a red disc with the number, bottom right. Tray
//! hosts differ in what else they show (labels, tooltips: a StatusNotifier host often neither),
//! but every one shows the icon.

/// 3×5 bitmaps of the digits and "+", one row per byte, high bit of three on the left.
const GLYPHS: [[u8; 5]; 11] = [
    [0b111, 0b101, 0b101, 0b101, 0b111], // 0
    [0b010, 0b110, 0b010, 0b010, 0b111], // 1
    [0b111, 0b001, 0b111, 0b100, 0b111], // 2
    [0b111, 0b001, 0b111, 0b001, 0b111], // 3
    [0b101, 0b101, 0b111, 0b001, 0b001], // 4
    [0b111, 0b100, 0b111, 0b001, 0b111], // 5
    [0b111, 0b100, 0b111, 0b101, 0b111], // 6
    [0b111, 0b001, 0b001, 0b001, 0b001], // 7
    [0b111, 0b101, 0b111, 0b101, 0b111], // 8
    [0b111, 0b101, 0b111, 0b001, 0b111], // 9
    [0b000, 0b010, 0b111, 0b010, 0b000], // +
];
const PLUS: usize = 10;

const BADGE: [u8; 4] = [0xd9, 0x2d, 0x20, 0xff];
const TEXT: [u8; 4] = [0xff, 0xff, 0xff, 0xff];

/// `rgba` (`width`×`height`, 4 bytes a pixel) with `count` on a badge; unchanged for 0.
/// Counts past 9 read "9+".
pub fn with_badge(rgba: &[u8], width: u32, height: u32, count: u32) -> Vec<u8> {
    let mut out = rgba.to_vec();
    let (w, h) = (width as usize, height as usize);
    if count == 0 || w == 0 || h == 0 || out.len() < w * h * 4 {
        return out;
    }
    let glyphs: Vec<usize> = if count > 9 {
        vec![9, PLUS]
    } else {
        vec![count as usize]
    };
    let side = w.min(h);
    let radius = (side * 3 / 10).max(5);
    let (cx, cy) = (w - radius, h - radius);
    let mut put = |x: usize, y: usize, color: [u8; 4]| {
        if x < w && y < h {
            let i = (y * w + x) * 4;
            out[i..i + 4].copy_from_slice(&color);
        }
    };
    for y in cy.saturating_sub(radius)..h {
        for x in cx.saturating_sub(radius)..w {
            let (dx, dy) = (x.abs_diff(cx), y.abs_diff(cy));
            if dx * dx + dy * dy <= radius * radius {
                put(x, y, BADGE);
            }
        }
    }
    // The text fills about 60% of the disc's height.
    let scale = (radius * 6 / 25).max(1);
    let text_w = (glyphs.len() * 4 - 1) * scale;
    let text_h = 5 * scale;
    let (left, top) = (cx.saturating_sub(text_w / 2), cy.saturating_sub(text_h / 2));
    for (n, glyph) in glyphs.iter().enumerate() {
        for (row, bits) in GLYPHS[*glyph].iter().enumerate() {
            for col in 0..3 {
                if bits & (0b100 >> col) == 0 {
                    continue;
                }
                let x0 = left + (n * 4 + col) * scale;
                let y0 = top + row * scale;
                for dy in 0..scale {
                    for dx in 0..scale {
                        put(x0 + dx, y0 + dy, TEXT);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixel(img: &[u8], w: usize, x: usize, y: usize) -> [u8; 4] {
        let i = (y * w + x) * 4;
        [img[i], img[i + 1], img[i + 2], img[i + 3]]
    }

    fn blank(side: usize) -> Vec<u8> {
        vec![0x20; side * side * 4]
    }

    #[test]
    fn no_count_leaves_the_icon_as_it_is() {
        let icon = blank(32);
        assert_eq!(with_badge(&icon, 32, 32, 0), icon);
    }

    #[test]
    fn a_count_puts_a_red_disc_bottom_right_and_leaves_the_top_left_alone() {
        for side in [16usize, 32, 128] {
            let out = with_badge(&blank(side), side as u32, side as u32, 3);
            assert_eq!(pixel(&out, side, 0, 0), [0x20; 4], "{side}");
            let edge = side - 1;
            // Just inside the disc's right edge, level with its centre: badge, not text.
            let r = (side * 3 / 10).max(5);
            assert_eq!(pixel(&out, side, edge, edge + 1 - r), BADGE, "{side}");
            assert!(
                out.chunks(4).any(|p| p == TEXT),
                "the digit is drawn at {side}px"
            );
        }
    }

    #[test]
    fn each_count_draws_differently_and_big_counts_read_nine_plus() {
        let base = blank(32);
        let drawn: Vec<Vec<u8>> = (1..=10).map(|n| with_badge(&base, 32, 32, n)).collect();
        for (i, a) in drawn.iter().enumerate() {
            for b in &drawn[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(
            with_badge(&base, 32, 32, 10),
            with_badge(&base, 32, 32, 250)
        );
    }

    #[test]
    fn a_short_buffer_is_returned_unchanged() {
        assert_eq!(with_badge(&[1, 2, 3], 32, 32, 2), vec![1, 2, 3]);
    }
}
