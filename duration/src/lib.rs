//! Go's `time.ParseDuration`, for command-line flags.
//!
//! rtcd takes etcd's flags and rtcd-apiserver takes kube-apiserver's, and
//! both programs read their duration flags with Go's `time.ParseDuration`
//! (`--experimental-watch-progress-notify-interval=10m`,
//! `--etcd-compaction-interval=5m`). Scripts written for them must start
//! rtcd unchanged, so this crate accepts exactly what Go accepts and refuses
//! the rest with Go's error texts, in one place for every binary.
//!
//! The syntax: an optional sign, then one or more decimal numbers, each with
//! an optional fraction and a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`,
//! `h`): `300ms`, `1.5h`, `2h45m30.5s`, `.5s`, `1.s`. The bare string `0`
//! is zero; any other number needs a unit. Unlike Go, a negative duration
//! is refused: [`std::time::Duration`] cannot hold one, and no flag means
//! anything by it.

use std::fmt::Write as _;
use std::time::Duration;

/// The largest Go duration in nanoseconds (Go's `Duration` is an `int64`).
const MAX_NANOS: u64 = i64::MAX as u64;

/// Why a string is not a duration. The texts are Go's (but for
/// [`Negative`](Self::Negative), which Go accepts), so users of etcd and
/// kube-apiserver recognise them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseDurationError {
    /// Not Go's syntax, or beyond Go's range (about 292 years).
    #[error("time: invalid duration {}", quote(.0))]
    Invalid(String),
    /// A number without a unit (other than the bare `0`).
    #[error("time: missing unit in duration {}", quote(.0))]
    MissingUnit(String),
    /// A unit Go does not know, e.g. `d`.
    #[error("time: unknown unit {} in duration {}", quote(.unit), quote(.input))]
    UnknownUnit { unit: String, input: String },
    /// Go parses it, but a negative duration has no meaning for a flag.
    #[error("time: negative duration {} is not allowed", quote(.0))]
    Negative(String),
}

/// Parses `text` as Go's `time.ParseDuration` does, refusing negative
/// durations (`-0` and `-0s` are zero, as in Go).
pub fn parse(text: &str) -> Result<Duration, ParseDurationError> {
    let invalid = || ParseDurationError::Invalid(text.to_string());
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    // Go's special case: "0" alone needs no unit.
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let bytes = rest.as_bytes();
        if !(bytes[0] == b'.' || bytes[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part: Go allows up to 2^63 here, the sign applied later.
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        let whole = leading_int(&rest[..digits]).ok_or_else(invalid)?;
        rest = &rest[digits..];
        // The fraction, if any.
        let mut fraction = Fraction::default();
        let mut fraction_digits = 0;
        if let Some(after_point) = rest.strip_prefix('.') {
            fraction_digits = after_point.bytes().take_while(u8::is_ascii_digit).count();
            fraction = Fraction::parse(&after_point[..fraction_digits]);
            rest = &after_point[fraction_digits..];
        }
        if digits == 0 && fraction_digits == 0 {
            // No digits at all, e.g. ".s".
            return Err(invalid());
        }
        // The unit: everything up to the next number.
        let unit_len = rest.bytes().take_while(|b| *b != b'.' && !b.is_ascii_digit()).count();
        if unit_len == 0 {
            return Err(ParseDurationError::MissingUnit(text.to_string()));
        }
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let nanos_per_unit = unit_nanos(unit).ok_or_else(|| ParseDurationError::UnknownUnit {
            unit: unit.to_string(),
            input: text.to_string(),
        })?;
        let mut value = whole.checked_mul(nanos_per_unit).filter(|v| *v <= 1 << 63).ok_or_else(invalid)?;
        if fraction.value > 0 {
            // Go computes this in float64, which is exact to the nanosecond
            // for fractions of an hour; doing it the same way gives the same
            // result to the last nanosecond.
            let nanos = fraction.value as f64 * (nanos_per_unit as f64 / fraction.scale);
            value = value.checked_add(nanos as u64).filter(|v| *v <= 1 << 63).ok_or_else(invalid)?;
        }
        // Go's own sum may wrap around at 2^64; this one refuses instead.
        total = total.checked_add(value).filter(|t| *t <= 1 << 63).ok_or_else(invalid)?;
    }
    if negative {
        return if total == 0 {
            Ok(Duration::ZERO)
        } else {
            Err(ParseDurationError::Negative(text.to_string()))
        };
    }
    if total > MAX_NANOS {
        return Err(invalid());
    }
    Ok(Duration::from_nanos(total))
}

/// Go's `leadingInt` over a run of ASCII digits: `None` past 2^63.
fn leading_int(digits: &str) -> Option<u64> {
    digits.bytes().try_fold(0u64, |x, b| {
        let next = x.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        (next <= 1 << 63).then_some(next)
    })
}

/// The digits after a decimal point as Go's `leadingFraction` keeps them:
/// `value / scale`, accumulating precision only while it fits.
#[derive(Debug, Clone, Copy)]
struct Fraction {
    value: u64,
    scale: f64,
}

impl Default for Fraction {
    fn default() -> Self {
        Self { value: 0, scale: 1.0 }
    }
}

impl Fraction {
    fn parse(digits: &str) -> Self {
        let mut fraction = Self::default();
        for b in digits.bytes() {
            if fraction.value > MAX_NANOS / 10 {
                break;
            }
            let next = fraction.value * 10 + u64::from(b - b'0');
            if next > 1 << 63 {
                break;
            }
            fraction.value = next;
            fraction.scale *= 10.0;
        }
        fraction
    }
}

fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        // U+00B5 (micro sign) and U+03BC (Greek small letter mu), as Go.
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60 * 1_000_000_000,
        "h" => 3600 * 1_000_000_000,
        _ => return None,
    })
}

/// Go's `time.quote`: double quotes, `"` and `\` escaped, and every byte of
/// a non-ASCII or control character written as `\xNN`.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c < ' ' || !c.is_ascii() {
            let mut utf8 = [0; 4];
            for byte in c.encode_utf8(&mut utf8).bytes() {
                let _ = write!(out, "\\x{byte:02x}");
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// Go's `time.Duration.String`: `0s`, `750ns`, `1.5µs`, `25ms`, `2.5s`,
/// `1m30s`, `2h0m0s`: the largest unit below a second, hours, minutes and
/// seconds above it; fractions without trailing zeros.
pub fn format(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    let fraction = |value: u128, unit: u128, digits: usize| -> String {
        let whole = value / unit;
        let rest = value % unit;
        match rest {
            0 => whole.to_string(),
            rest => format!("{whole}.{}", format!("{rest:0digits$}").trim_end_matches('0')),
        }
    };
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", fraction(nanos, 1_000, 3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", fraction(nanos, 1_000_000, 6));
    }
    let seconds = fraction(nanos % 60_000_000_000, 1_000_000_000, 9);
    let minutes = nanos / 60_000_000_000;
    match (minutes / 60, minutes % 60) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Duration {
        parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    fn err(text: &str) -> String {
        match parse(text) {
            Ok(d) => panic!("{text:?} parsed as {d:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn whole_numbers_in_every_unit() {
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("5s"), Duration::from_secs(5));
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("1478s"), Duration::from_secs(1478));
        assert_eq!(ok("7ns"), Duration::from_nanos(7));
        assert_eq!(ok("7us"), Duration::from_micros(7));
        assert_eq!(ok("7µs"), Duration::from_micros(7), "U+00B5 micro sign");
        assert_eq!(ok("7μs"), Duration::from_micros(7), "U+03BC Greek mu");
        assert_eq!(ok("7ms"), Duration::from_millis(7));
        assert_eq!(ok("7m"), Duration::from_secs(7 * 60));
        assert_eq!(ok("7h"), Duration::from_secs(7 * 3600));
    }

    #[test]
    fn signs_and_zero_as_go() {
        assert_eq!(ok("+5s"), Duration::from_secs(5));
        assert_eq!(ok("+0"), Duration::ZERO);
        assert_eq!(ok("-0"), Duration::ZERO, "Go gives 0");
        assert_eq!(ok("0s"), Duration::ZERO);
        assert_eq!(ok("-0s"), Duration::ZERO, "Go gives 0");
        assert_eq!(ok("0h0m0s"), Duration::ZERO);
        assert_eq!(ok("00s"), Duration::ZERO);
        assert_eq!(ok("0.0s"), Duration::ZERO);
    }

    #[test]
    fn fractions_and_sequences() {
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok(".5s"), Duration::from_millis(500));
        assert_eq!(ok("1.s"), Duration::from_secs(1));
        assert_eq!(ok("1.004s"), Duration::from_millis(1004));
        assert_eq!(ok("1.0040s"), Duration::from_millis(1004));
        assert_eq!(ok("100.00100s"), Duration::from_millis(100_001));
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("2h45m30.5s"), Duration::from_millis((2 * 3600 + 45 * 60 + 30) * 1000 + 500));
        assert_eq!(ok("3h30m"), Duration::from_secs(3 * 3600 + 30 * 60));
        assert_eq!(ok("10.5s4m"), Duration::from_millis(4 * 60_000 + 10_500));
        assert_eq!(ok("1h1m1s1ms1us1ns"), Duration::from_nanos(3_661_001_001_001));
        assert_eq!(ok("39h9m14.425s"), Duration::from_millis(140_954_425));
        // Go's float64 step is exact to the nanosecond for fractions of an hour.
        assert_eq!(ok("0.3333333333333333333h"), Duration::from_nanos(20 * 60 * 1_000_000_000));
        assert_eq!(ok("52763797000ns"), Duration::from_nanos(52_763_797_000));
        assert_eq!(ok("0.100000000000000000000h"), Duration::from_secs(360));
        // Fraction digits past what fits are ignored, not an error.
        assert_eq!(ok("0.830103483285477580700h"), Duration::from_nanos(2_988_372_539_827));
    }

    #[test]
    fn the_largest_durations() {
        assert_eq!(ok("9223372036854775807ns"), Duration::from_nanos(i64::MAX as u64));
        assert_eq!(ok("9223372036.854775807s"), Duration::from_nanos(i64::MAX as u64));
        assert_eq!(ok("2562047h47m16.854775807s"), Duration::from_nanos(i64::MAX as u64));
        assert_eq!(ok("9223372036854775.807us"), Duration::from_nanos(i64::MAX as u64));
        assert_eq!(ok("9223372036s854ms775us807ns"), Duration::from_nanos(i64::MAX as u64));
    }

    #[test]
    fn overflow_is_an_invalid_duration() {
        for text in [
            "9223372036854775808ns",
            "9223372036854775809ns",
            "9223372036854775810ns",
            "-9223372036854775809ns",
            "9223372036854776us",
            "9223372036854775.808us",
            "9223372036854ms775us808ns",
            "9223372036.854775808s",
            "2562047h47m16.854775808s",
            "9223372036854775807h",
            "3000000h",
            "99999999999999999999s",
            // Each part fits; together they would wrap Go's uint64 to zero.
            "9223372036854775808ns9223372036854775808ns",
        ] {
            assert_eq!(err(text), format!("time: invalid duration \"{text}\""));
        }
    }

    #[test]
    fn errors_read_like_go() {
        assert_eq!(err(""), r#"time: invalid duration """#);
        assert_eq!(err("5 minutes"), r#"time: unknown unit " minutes" in duration "5 minutes""#);
        assert_eq!(err("10"), r#"time: missing unit in duration "10""#);
        assert_eq!(err("1.5"), r#"time: missing unit in duration "1.5""#);
        assert_eq!(err("10x"), r#"time: unknown unit "x" in duration "10x""#);
        assert_eq!(err("1d"), r#"time: unknown unit "d" in duration "1d""#);
        assert_eq!(err("3"), r#"time: missing unit in duration "3""#);
        assert_eq!(err("-"), r#"time: invalid duration "-""#);
        assert_eq!(err("+"), r#"time: invalid duration "+""#);
        assert_eq!(err("s"), r#"time: invalid duration "s""#);
        assert_eq!(err("."), r#"time: invalid duration ".""#);
        assert_eq!(err("-."), r#"time: invalid duration "-.""#);
        assert_eq!(err(".s"), r#"time: invalid duration ".s""#);
        assert_eq!(err("+.s"), r#"time: invalid duration "+.s""#);
        assert_eq!(err("1..5s"), r#"time: missing unit in duration "1..5s""#);
        assert_eq!(err("1s "), r#"time: unknown unit "s " in duration "1s ""#);
        assert_eq!(err(" 1s"), r#"time: invalid duration " 1s""#);
        assert_eq!(err("5m0"), r#"time: missing unit in duration "5m0""#);
        assert_eq!(err("--5s"), r#"time: invalid duration "--5s""#);
        assert_eq!(err("0x10s"), r#"time: unknown unit "x" in duration "0x10s""#);
    }

    #[test]
    fn quoting_escapes_like_go() {
        assert_eq!(err("٣s"), r#"time: invalid duration "\xd9\xa3s""#);
        assert_eq!(err("5µx"), r#"time: unknown unit "\xc2\xb5x" in duration "5\xc2\xb5x""#);
        assert_eq!(err("1\"s"), r#"time: unknown unit "\"s" in duration "1\"s""#);
        assert_eq!(err("1\\s"), r#"time: unknown unit "\\s" in duration "1\\s""#);
        assert_eq!(err("1\ts"), r#"time: unknown unit "\x09s" in duration "1\x09s""#);
        assert_eq!(err("1\u{fffd}"), r#"time: unknown unit "\xef\xbf\xbd" in duration "1\xef\xbf\xbd""#);
    }

    #[test]
    fn negative_durations_are_refused() {
        assert_eq!(parse("-1s"), Err(ParseDurationError::Negative("-1s".into())));
        assert_eq!(err("-1.5h"), r#"time: negative duration "-1.5h" is not allowed"#);
        // Go accepts down to -2^63 ns; still negative.
        for text in ["-9223372036854775808ns", "-9223372036854775.808us", "-2562047h47m16.854775808s"] {
            assert!(matches!(parse(text), Err(ParseDurationError::Negative(_))), "{text}");
        }
        // Syntax errors come first, as in Go.
        assert_eq!(err("-5x"), r#"time: unknown unit "x" in duration "-5x""#);
        assert_eq!(err("-10"), r#"time: missing unit in duration "-10""#);
    }

    #[test]
    fn durations_are_written_as_go_writes_them() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(750), "750ns"),
            (Duration::from_nanos(1_500), "1.5µs"),
            (Duration::from_millis(25), "25ms"),
            (Duration::from_micros(2_500), "2.5ms"),
            (Duration::from_millis(2_500), "2.5s"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(7_200), "2h0m0s"),
        ];
        for (duration, text) in cases {
            assert_eq!(format(duration), text);
            assert_eq!(parse(text), Ok(duration), "{text} reads back");
        }
    }
}
