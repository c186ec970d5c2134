//! IP addresses and CIDRs as kube's strict validation reads them
//! (apimachinery's `IsValidIP` / `IsValidCIDR`): what is wrong with a
//! value, in kube's words, or nothing when it is valid and canonical.

use std::net::{IpAddr, Ipv4Addr};

const NOT_AN_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const NOT_A_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// Why `text` is not a valid IP address in canonical form.
pub fn ip_errors(text: &str) -> Vec<String> {
    let ip = match parse(text) {
        Ok(ip) => ip,
        Err(why) => return vec![why.to_string()],
    };
    if is_ipv4_mapped(ip) {
        return vec!["must not be an IPv4-mapped IPv6 address".to_string()];
    }
    canonical(text, ip.to_string())
}

/// Why `text` is not a valid subnet (`10.0.0.0/16`) in canonical form.
pub fn cidr_errors(text: &str) -> Vec<String> {
    let Some((address, bits)) = text.split_once('/') else { return vec![NOT_A_CIDR.to_string()] };
    let Ok(ip) = parse(address) else { return vec![NOT_A_CIDR.to_string()] };
    let width = if ip.is_ipv4() { 32 } else { 128 };
    let Some(prefix) =
        bits.parse::<u8>().ok().filter(|p| *p <= width && bits.bytes().all(|b| b.is_ascii_digit()))
    else {
        return vec![NOT_A_CIDR.to_string()];
    };
    if bits.len() > 1 && bits.starts_with('0') || leading_zero_octets(address) {
        return vec!["must not have leading 0s in IP or prefix length".to_string()];
    }
    if is_ipv4_mapped(ip) {
        return vec!["must not have an IPv4-mapped IPv6 address".to_string()];
    }
    let masked = mask(ip, prefix);
    if masked != ip {
        return vec!["must not have bits set beyond the prefix length".to_string()];
    }
    canonical(text, format!("{masked}/{prefix}"))
}

fn parse(text: &str) -> Result<IpAddr, &'static str> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(ip);
    }
    // Go's sloppy parser reads 010.1.2.3 as an address; the strict one refuses it.
    if leading_zero_octets(text) {
        let cleaned: Vec<String> = text
            .split('.')
            .map(|o| match o.trim_start_matches('0') {
                "" => "0".to_string(),
                rest => rest.to_string(),
            })
            .collect();
        if cleaned.join(".").parse::<Ipv4Addr>().is_ok() {
            return Err("must not have leading 0s");
        }
    }
    Err(NOT_AN_IP)
}

fn leading_zero_octets(text: &str) -> bool {
    let octets: Vec<&str> = text.split('.').collect();
    octets.len() == 4 && octets.iter().any(|o| o.len() > 1 && o.starts_with('0'))
}

fn is_ipv4_mapped(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4) & u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(bits.into())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(bits.into())
        }
    }
}

fn canonical(text: &str, canonical: String) -> Vec<String> {
    if text == canonical {
        return Vec::new();
    }
    vec![format!("must be in canonical form ({})", crate::selector::validation::go_quote(&canonical))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_valid_and_canonical() {
        assert!(ip_errors("10.96.0.10").is_empty());
        assert!(ip_errors("2001:db8::1").is_empty());
        assert_eq!(ip_errors("10.96.0"), [NOT_AN_IP]);
        assert_eq!(ip_errors("010.96.0.1"), ["must not have leading 0s"]);
        assert_eq!(ip_errors("2001:DB8::1"), ["must be in canonical form (\"2001:db8::1\")"]);
        assert_eq!(ip_errors("::ffff:1.2.3.4"), ["must not be an IPv4-mapped IPv6 address"]);
    }

    #[test]
    fn subnets_are_masked_and_canonical() {
        assert!(cidr_errors("10.96.0.0/12").is_empty());
        assert!(cidr_errors("fd00:10:96::/112").is_empty());
        assert_eq!(cidr_errors("10.96.0.1/12"), ["must not have bits set beyond the prefix length"]);
        assert_eq!(cidr_errors("10.96.0.0/33"), [NOT_A_CIDR]);
        assert_eq!(cidr_errors("10.96.0.0"), [NOT_A_CIDR]);
        assert_eq!(cidr_errors("FD00::/64"), ["must be in canonical form (\"fd00::/64\")"]);
    }
}
