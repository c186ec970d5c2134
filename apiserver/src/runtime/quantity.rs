//! Resource quantities (`500m`, `1.5Gi`, `2e3`) as kube's `resource.Quantity`
//! reads, compares, adds and prints them: exact decimal values, kept with
//! the format they were written in, printed in kube's canonical form
//! (`1.5Gi` prints as `1536Mi`, `0.5` as `500m`), which is what kube's
//! messages quote.

use std::cmp::Ordering;

/// How a quantity was written, which is how it is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `Ki`, `Mi`, ... (powers of 1024).
    BinarySI,
    /// `m`, `k`, `M`, ... or no suffix (powers of 1000).
    DecimalSI,
    /// `e3`, `E-2`.
    DecimalExponent,
}

/// `mantissa × 10^exponent`, exactly.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
    pub format: Format,
}

/// kube's message for a quantity it cannot read.
pub const SYNTAX: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const BINARY: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL: [(&str, i32); 10] =
    [("n", -9), ("u", -6), ("m", -3), ("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];
/// The most digits a mantissa keeps; larger quantities are refused rather
/// than overflowing (kube's own limit is far beyond any resource).
const MAX_DIGITS: usize = 30;

impl Quantity {
    /// Reads `text` as kube does; values finer than a nano-unit round up.
    pub fn parse(text: &str) -> Result<Quantity, String> {
        let bad = || SYNTAX.to_string();
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let number_len = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        let (number, suffix) = rest.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return Err(bad());
        }
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > MAX_DIGITS {
            return Err(bad());
        }
        let mut mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().map_err(|_| bad())? };
        let mut exponent = -i32::try_from(fraction.len()).map_err(|_| bad())?;
        let format = if let Some(power) = BINARY.iter().position(|s| !s.is_empty() && *s == suffix) {
            mantissa = mantissa.checked_mul(1i128 << (10 * power)).ok_or_else(bad)?;
            Format::BinarySI
        } else if let Some((_, power)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
            exponent += power;
            Format::DecimalSI
        } else if let Some(power) = suffix.strip_prefix(['e', 'E']) {
            let power: i32 = power.parse().map_err(|_| bad())?;
            if !(-100..=100).contains(&power) {
                return Err(bad());
            }
            exponent += power;
            Format::DecimalExponent
        } else {
            return Err(bad());
        };
        if negative {
            mantissa = -mantissa;
        }
        Ok(Quantity { mantissa, exponent, format }.round_up_to_nano())
    }

    /// A DecimalSI quantity of `milli` thousandths (what kube builds sums of
    /// CPU from).
    pub fn from_milli(milli: i128) -> Quantity {
        Quantity { mantissa: milli, exponent: -3, format: Format::DecimalSI }
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    fn round_up_to_nano(mut self) -> Quantity {
        while self.exponent < -9 {
            let (quotient, remainder) = (self.mantissa / 10, self.mantissa % 10);
            self.mantissa = if remainder > 0 { quotient + 1 } else { quotient };
            self.exponent += 1;
        }
        self
    }

    /// The mantissa at `exponent` (not above this one's), if it fits.
    fn mantissa_at(&self, exponent: i32) -> Option<i128> {
        let shift = u32::try_from(self.exponent - exponent).ok()?;
        self.mantissa.checked_mul(10i128.checked_pow(shift)?)
    }

    /// The value in units of `10^exponent`, rounded up (kube's
    /// `ScaledValue`): `-3` gives kube's `MilliValue`, `0` its `Value`.
    pub fn scaled(&self, exponent: i32) -> i128 {
        if self.exponent >= exponent {
            return self.mantissa_at(exponent).unwrap_or(if self.mantissa < 0 {
                i128::MIN
            } else {
                i128::MAX
            });
        }
        let divisor = u32::try_from(exponent - self.exponent).ok().and_then(|s| 10i128.checked_pow(s));
        let Some(divisor) = divisor else { return i128::from(self.mantissa > 0) };
        let (quotient, remainder) = (self.mantissa / divisor, self.mantissa % divisor);
        if remainder > 0 { quotient + 1 } else { quotient }
    }

    pub fn milli_value(&self) -> i128 {
        self.scaled(-3)
    }

    /// The sum, in this quantity's format.
    pub fn add(&self, other: &Quantity) -> Quantity {
        let exponent = self.exponent.min(other.exponent);
        match (self.mantissa_at(exponent), other.mantissa_at(exponent)) {
            (Some(a), Some(b)) if a.checked_add(b).is_some() => {
                Quantity { mantissa: a + b, exponent, format: self.format }
            }
            _ => *self,
        }
    }

    fn as_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }

    /// kube's `Quantity.String()`.
    pub fn canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".into();
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            // Below 1024, or not a whole number: kube prints it decimal
            // rather than round it.
            if self.as_f64().abs() < 1024.0 || self.integral_value().is_none() {
                format = Format::DecimalSI;
            }
        }
        match format {
            Format::BinarySI => self.canonical_binary(),
            _ => self.canonical_decimal(format),
        }
    }

    fn canonical_binary(&self) -> String {
        let Some(mut value) = self.integral_value() else { return self.canonical_decimal(Format::DecimalSI) };
        let mut power = 0;
        while power < BINARY.len() - 1 && value % 1024 == 0 {
            value /= 1024;
            power += 1;
        }
        format!("{value}{}", BINARY[power])
    }

    fn integral_value(&self) -> Option<i128> {
        if self.exponent >= 0 {
            return self.mantissa_at(0);
        }
        let divisor = 10i128.checked_pow(self.exponent.unsigned_abs())?;
        (self.mantissa % divisor == 0).then(|| self.mantissa / divisor)
    }

    /// No trailing zeros in the mantissa, the exponent brought down to a
    /// multiple of three, then kube's suffix for it.
    fn canonical_decimal(&self, format: Format) -> String {
        let (mut mantissa, mut exponent) = (self.mantissa, self.exponent);
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        let adjust = exponent.rem_euclid(3);
        if let Some(scaled) = mantissa.checked_mul(10i128.pow(adjust.unsigned_abs())) {
            mantissa = scaled;
            exponent -= adjust;
        }
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            _ => match DECIMAL.iter().find(|(_, p)| *p == exponent) {
                Some((suffix, _)) => suffix.to_string(),
                None => format!("e{exponent}"),
            },
        };
        format!("{mantissa}{suffix}")
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }
}

impl Quantity {
    /// Compares values, whatever the formats.
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        let exponent = self.exponent.min(other.exponent);
        match (self.mantissa_at(exponent), other.mantissa_at(exponent)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self.as_f64().partial_cmp(&other.as_f64()).unwrap_or(Ordering::Equal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Quantity::parse(text).unwrap().canonical()
    }

    #[test]
    fn quantities_print_in_kubes_canonical_form() {
        for (written, printed) in [
            ("100m", "100m"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1500", "1500"),
            ("2000", "2k"),
            ("1.5Gi", "1536Mi"),
            ("1024Mi", "1Gi"),
            ("512Ki", "512Ki"),
            ("1Ki", "1Ki"),
            ("100", "100"),
            ("0", "0"),
            ("0.1Ki", "102400m"),
            ("1e3", "1e3"),
            ("1E6", "1e6"),
            ("12e2", "1200"),
            ("250M", "250M"),
            ("-1", "-1"),
            ("+2", "2"),
            ("0.0000000001", "1n"),
            (".5", "500m"),
        ] {
            assert_eq!(canonical(written), printed, "{written}");
        }
    }

    #[test]
    fn quantities_compare_and_add_by_value() {
        let q = |t| Quantity::parse(t).unwrap();
        assert_eq!(q("1Gi").cmp_value(&q("1073741824")), Ordering::Equal);
        assert_eq!(q("500m").cmp_value(&q("0.5")), Ordering::Equal);
        assert_eq!(q("1k").cmp_value(&q("1Ki")), Ordering::Less);
        assert_eq!(q("2").cmp_value(&q("1500m")), Ordering::Greater);
        assert_eq!(q("100m").add(&q("250m")).canonical(), "350m");
        assert_eq!(q("1Gi").add(&q("512Mi")).canonical(), "1536Mi");
        assert_eq!(q("1.5").milli_value(), 1500);
        assert_eq!(q("1n").milli_value(), 1, "rounded up");
        assert_eq!(q("1500m").scaled(0), 2, "rounded up");
        assert_eq!(Quantity::from_milli(1500).canonical(), "1500m");
    }

    #[test]
    fn malformed_quantities_are_refused_not_misread() {
        for bad in [
            "",
            "m",
            "1.2.3",
            "1x",
            "1 Gi",
            "--1",
            "1e",
            "1e999",
            "1Gii",
            "99999999999999999999999999999999999",
        ] {
            assert_eq!(Quantity::parse(bad).unwrap_err(), SYNTAX, "{bad:?}");
        }
    }
}
