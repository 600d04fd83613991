//! Sizes in bytes as people write them in a config file or on a command line.

/// Parses `64MiB`, `1.5 GiB`, `500KB`, `4096`, `4096B` (KiB, MiB, GiB, TiB are powers of 1024;
/// KB, MB, GB, TB of 1000; K, M, G, T alone mean KiB, MiB, GiB, TiB).
///
/// # Errors
/// Not a number with one of those units, or out of range.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (write e.g. 64MiB, 1GiB, 4096)"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kib" | "k" => 1024.0,
        "mib" | "m" => 1024.0 * 1024.0,
        "gib" | "g" => 1024.0 * 1024.0 * 1024.0,
        "tib" | "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        other => {
            return Err(format!(
                "{s:?}: unknown unit {other:?} (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)"
            ))
        }
    };
    let bytes = n * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_size("500KB"), Ok(500_000));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("ten").is_err());
        assert!(parse_size("5 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
    }
}
