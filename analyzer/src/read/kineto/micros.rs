//! Exact conversion of Chrome-trace microsecond numbers to integer nanoseconds.
//!
//! Kineto writes `ts`/`dur` as decimal microseconds, e.g. `1695835535123456.789`.
//! Parsed as f64 that loses the nanoseconds (f64 has 53 bits; 1.7e18 ns needs 61),
//! so we read the number's text and scale it by 1000 in integer arithmetic.
//! `displayTimeUnit` only changes how viewers display times: the values stay in
//! microseconds (the corpus's ns_resolution_trace says "ns" and holds µs values).

/// Digits kept in the mantissa; more cannot change an i64 nanosecond value.
const MAX_DIGITS: u32 = 36;

/// Parses a JSON number of microseconds into nanoseconds, rounding to the
/// nearest nanosecond (halves away from zero).
pub fn micros_to_ns(text: &str) -> Result<i64, &'static str> {
    let b = text.as_bytes();
    let mut i = 0;
    let neg = b.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    let mut mant: u128 = 0;
    let mut digits = 0u32;
    // Power of ten applied to `mant`: dropped integer digits raise it, kept
    // fraction digits lower it.
    let mut exp10: i64 = 3;
    let mut any = false;
    while i < b.len() && b[i].is_ascii_digit() {
        any = true;
        if digits < MAX_DIGITS {
            mant = mant * 10 + u128::from(b[i] - b'0');
            if mant > 0 {
                digits += 1;
            }
        } else {
            exp10 += 1;
        }
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let mut frac = false;
        while i < b.len() && b[i].is_ascii_digit() {
            frac = true;
            if digits < MAX_DIGITS {
                mant = mant * 10 + u128::from(b[i] - b'0');
                if mant > 0 {
                    digits += 1;
                }
                exp10 -= 1;
            }
            i += 1;
        }
        if !frac {
            return Err("malformed number");
        }
    }
    if !any {
        return Err("not a number");
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut e: i64 = 0;
        let mut edigits = false;
        while i < b.len() && b[i].is_ascii_digit() {
            edigits = true;
            e = (e * 10 + i64::from(b[i] - b'0')).min(1_000_000);
            i += 1;
        }
        if !edigits {
            return Err("malformed exponent");
        }
        exp10 += if eneg { -e } else { e };
    }
    if i != b.len() {
        return Err("not a number");
    }
    if mant == 0 {
        return Ok(0);
    }
    let v: u128 = if exp10 >= 0 {
        if exp10 > 38 {
            return Err("time out of range");
        }
        mant.checked_mul(10u128.pow(exp10 as u32))
            .ok_or("time out of range")?
    } else if exp10 < -38 {
        0
    } else {
        let div = 10u128.pow((-exp10) as u32);
        let (q, r) = (mant / div, mant % div);
        if r * 2 >= div { q + 1 } else { q }
    };
    let v = i64::try_from(v).map_err(|_| "time out of range")?;
    Ok(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::micros_to_ns;

    #[test]
    fn exact_without_float_loss() {
        assert_eq!(
            micros_to_ns("1695835535123456.789"),
            Ok(1_695_835_535_123_456_789)
        );
        assert_eq!(
            micros_to_ns("1712195495505583.2"),
            Ok(1_712_195_495_505_583_200)
        );
        assert_eq!(micros_to_ns("4458676522690.655"), Ok(4_458_676_522_690_655));
        assert_eq!(micros_to_ns("63.813"), Ok(63_813));
        assert_eq!(micros_to_ns("0"), Ok(0));
        assert_eq!(micros_to_ns("0.0"), Ok(0));
        assert_eq!(micros_to_ns("-1.5"), Ok(-1_500));
        assert_eq!(micros_to_ns("17"), Ok(17_000));
    }

    #[test]
    fn rounds_sub_nanosecond_digits() {
        assert_eq!(micros_to_ns("0.0004"), Ok(0));
        assert_eq!(micros_to_ns("0.0005"), Ok(1));
        assert_eq!(micros_to_ns("1.23456789"), Ok(1_235));
        assert_eq!(micros_to_ns("-0.0006"), Ok(-1));
    }

    #[test]
    fn exponents() {
        assert_eq!(micros_to_ns("1.5e3"), Ok(1_500_000));
        assert_eq!(
            micros_to_ns("1.695835535123456789E15"),
            Ok(1_695_835_535_123_456_789)
        );
        assert_eq!(micros_to_ns("25e-3"), Ok(25));
        assert_eq!(micros_to_ns("1e-400"), Ok(0));
    }

    #[test]
    fn rejects_garbage_and_overflow() {
        assert!(micros_to_ns("").is_err());
        assert!(micros_to_ns("\"12\"").is_err());
        assert!(micros_to_ns("1.").is_err());
        assert!(micros_to_ns("1e").is_err());
        assert!(micros_to_ns("null").is_err());
        assert!(micros_to_ns("1e30").is_err());
        assert!(micros_to_ns("99999999999999999999").is_err());
        assert!(micros_to_ns("1e999999999").is_err());
    }
}
