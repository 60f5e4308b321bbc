//! Whether this machine should keep a warm spare now. A spare is a container nobody asked for
//! yet: on battery it costs wake-ups and power, and when memory is short its resident pages
//! matter more than a faster first run.

use std::path::Path;

/// Below this much available memory (`MemAvailable` in `/proc/meminfo`) no spare is kept.
pub const MIN_AVAILABLE_BYTES: u64 = 1 << 30;

/// Where Linux describes power supplies and memory; tests point these elsewhere.
pub struct Sources<'a> {
    pub power_supply: &'a Path,
    pub meminfo: &'a Path,
}

impl Sources<'static> {
    pub fn system() -> Self {
        Self {
            power_supply: Path::new("/sys/class/power_supply"),
            meminfo: Path::new("/proc/meminfo"),
        }
    }
}

/// `None` when a spare may be kept; otherwise the reason in words for `sandbox ls` and logs.
/// What cannot be read (no power-supply class in a VM, a /proc without `MemAvailable`) does not
/// count against the spare.
pub fn why_not(sources: &Sources<'_>) -> Option<String> {
    if on_battery(sources.power_supply) {
        return Some("the machine runs on battery".to_string());
    }
    match available_bytes(sources.meminfo) {
        Some(free) if free < MIN_AVAILABLE_BYTES => Some(format!(
            "only {} MiB of memory is available (a spare needs {} MiB free)",
            free >> 20,
            MIN_AVAILABLE_BYTES >> 20
        )),
        _ => None,
    }
}

/// On battery: a battery discharges and no mains or USB supply is online. A laptop on its
/// charger reports its battery `Charging`, `Full` or `Not charging`.
fn on_battery(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let read = |supply: &Path, file: &str| {
        std::fs::read_to_string(supply.join(file))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mut discharging = false;
    let mut external = false;
    for entry in entries.flatten() {
        let supply = entry.path();
        match read(&supply, "type").as_str() {
            "Battery" => discharging |= read(&supply, "status") == "Discharging",
            "Mains" | "USB" => external |= read(&supply, "online") == "1",
            _ => {}
        }
    }
    discharging && !external
}

fn available_bytes(meminfo: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(meminfo).ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn supply(root: &Path, name: &str, files: &[(&str, &str)]) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, value) in files {
            std::fs::write(dir.join(file), format!("{value}\n")).unwrap();
        }
    }

    fn verdict(root: &Path, available_kib: Option<u64>) -> Option<String> {
        let meminfo = root.join("meminfo");
        let mut text = "MemTotal:       24576000 kB\nMemFree:         100000 kB\n".to_string();
        if let Some(kib) = available_kib {
            text.push_str(&format!("MemAvailable:   {kib} kB\n"));
        }
        std::fs::write(&meminfo, text).unwrap();
        let power = root.join("power_supply");
        std::fs::create_dir_all(&power).unwrap();
        why_not(&Sources {
            power_supply: &power,
            meminfo: &meminfo,
        })
    }

    #[test]
    fn a_desktop_without_a_battery_and_with_memory_keeps_a_spare() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(verdict(root.path(), Some(8 << 20)), None);
    }

    #[test]
    fn a_discharging_battery_without_mains_turns_the_spare_off() {
        let root = tempfile::tempdir().unwrap();
        let power = root.path().join("power_supply");
        supply(
            &power,
            "BAT0",
            &[("type", "Battery"), ("status", "Discharging")],
        );
        supply(&power, "AC", &[("type", "Mains"), ("online", "0")]);
        let why = verdict(root.path(), Some(8 << 20)).unwrap();
        assert!(why.contains("battery"), "{why}");
    }

    #[test]
    fn a_laptop_on_its_charger_keeps_a_spare() {
        let root = tempfile::tempdir().unwrap();
        let power = root.path().join("power_supply");
        supply(&power, "BAT0", &[("type", "Battery"), ("status", "Full")]);
        supply(&power, "AC", &[("type", "Mains"), ("online", "1")]);
        assert_eq!(verdict(root.path(), Some(8 << 20)), None);
        // Some batteries say Discharging for a moment while the charger is plugged in.
        supply(
            &power,
            "BAT0",
            &[("type", "Battery"), ("status", "Discharging")],
        );
        assert_eq!(verdict(root.path(), Some(8 << 20)), None);
    }

    #[test]
    fn little_available_memory_turns_the_spare_off() {
        let root = tempfile::tempdir().unwrap();
        let why = verdict(root.path(), Some(512 * 1024)).unwrap();
        assert!(why.contains("512 MiB"), "{why}");
        assert_eq!(verdict(root.path(), Some(1024 * 1024)), None);
    }

    #[test]
    fn what_cannot_be_read_does_not_count_against_the_spare() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(verdict(root.path(), None), None);
        assert_eq!(
            why_not(&Sources {
                power_supply: &root.path().join("missing"),
                meminfo: &root.path().join("missing"),
            }),
            None
        );
    }
}
