//! Temporal profiles and grammars (spec/temporal.md §1, §2, §8).
//!
//! One strict offset-datetime grammar for every datetime input (README R23); chrono is used
//! only for instant arithmetic after the grammar check (spec/rust-notes.md §7.2).

use chrono::{DateTime, FixedOffset, NaiveDate, Timelike};
use std::cmp::Ordering;

/// Profile id of calendar dates (the default).
pub const DATE_PROFILE: &str = "date-3fcbb9f";
/// Profile id of offset datetimes.
pub const INSTANT_PROFILE: &str = "instant-0b87c52";

/// The JSON Schema pattern of an offset datetime (spec/temporal.md §2.1).
pub const OFFSET_DATETIME_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|\+([01][0-9]|2[0-3]):[0-5][0-9]|-(00:(0[1-9]|[1-5][0-9])|(0[1-9]|1[0-9]|2[0-3]):[0-5][0-9]))$";
/// The JSON Schema pattern of an upgrade target (spec/temporal.md §2.2).
pub const UPGRADE_TARGET_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|\+((0[0-9]|1[0-3]):[0-5][0-9]|14:00)|-(00:(0[1-9]|[1-5][0-9])|(0[1-9]|1[0-3]):[0-5][0-9]|14:00))$";
/// The JSON Schema pattern of a calendar date (spec/temporal.md §2.3).
pub const DATE_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

/// A temporal profile (spec/temporal.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// `date-3fcbb9f`: calendar dates.
    #[default]
    Date,
    /// `instant-0b87c52`: offset datetimes.
    Instant,
}

impl Profile {
    /// Parses a wire value: absent or `""` → date; any other unknown value → `None`
    /// (`invalid_request`, `unknown OKF temporal profile`).
    #[must_use]
    pub fn parse(s: Option<&str>) -> Option<Self> {
        match s {
            None | Some("" | DATE_PROFILE) => Some(Profile::Date),
            Some(INSTANT_PROFILE) => Some(Profile::Instant),
            Some(_) => None,
        }
    }

    /// The normalised id echoed in outputs.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Profile::Date => DATE_PROFILE,
            Profile::Instant => INSTANT_PROFILE,
        }
    }

    /// Whether `s` is a valid temporal value under this profile.
    #[must_use]
    pub fn is_valid(self, s: &str) -> bool {
        match self {
            Profile::Date => parse_date(s).is_some(),
            Profile::Instant => parse_offset_datetime(s).is_some(),
        }
    }

    /// Compares two values valid under this profile (dates as strings, instants as instants).
    /// `None` when either is invalid.
    #[must_use]
    pub fn compare(self, a: &str, b: &str) -> Option<Ordering> {
        match self {
            Profile::Date => {
                parse_date(a)?;
                parse_date(b)?;
                Some(a.cmp(b))
            }
            Profile::Instant => Some(parse_offset_datetime(a)?.cmp(&parse_offset_datetime(b)?)),
        }
    }
}

/// A wire `temporal_profile` as requested (spec/temporal.md §1, §11 rule 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// `auto`, `""` or absent: resolved per request from the bundle (spec/temporal.md §11).
    #[default]
    Auto,
    /// A profile id was passed.
    Explicit(Profile),
}

/// The wire id of the `auto` choice.
pub const AUTO_PROFILE: &str = "auto";

impl Choice {
    /// Parses a wire value: absent, `""` or `"auto"` → [`Choice::Auto`]; a profile id →
    /// [`Choice::Explicit`]; anything else → `None` (`invalid_request`, `unknown OKF temporal
    /// profile`, spec/temporal.md §1 rule 1).
    #[must_use]
    pub fn parse(s: Option<&str>) -> Option<Self> {
        match s {
            None | Some("" | AUTO_PROFILE) => Some(Choice::Auto),
            Some(DATE_PROFILE) => Some(Choice::Explicit(Profile::Date)),
            Some(INSTANT_PROFILE) => Some(Choice::Explicit(Profile::Instant)),
            Some(_) => None,
        }
    }
}

/// Which kinds of temporal value a bundle or a request holds (spec/temporal.md §11 rule 1):
/// calendar dates (§2.3) and offset datetimes (§2.1). Other values are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kinds {
    /// At least one calendar date.
    pub date: bool,
    /// At least one offset datetime.
    pub instant: bool,
}

impl Kinds {
    /// Records `s`: a calendar date, an offset datetime, or neither (ignored).
    pub fn observe(&mut self, s: &str) {
        if parse_date(s).is_some() {
            self.date = true;
        } else if parse_offset_datetime(s).is_some() {
            self.instant = true;
        }
    }

    /// Both of `self` and `other`.
    #[must_use]
    pub fn union(self, other: Kinds) -> Kinds {
        Kinds {
            date: self.date || other.date,
            instant: self.instant || other.instant,
        }
    }

    /// The profile the kinds decide alone: instants only → instant, dates only → date;
    /// `None` when there are neither or both.
    #[must_use]
    pub fn decides(self) -> Option<Profile> {
        match (self.date, self.instant) {
            (true, false) => Some(Profile::Date),
            (false, true) => Some(Profile::Instant),
            _ => None,
        }
    }

    /// One byte: bit 0 dates, bit 1 instants (the memo's form).
    #[must_use]
    pub fn to_bits(self) -> u8 {
        u8::from(self.date) | (u8::from(self.instant) << 1)
    }

    /// The inverse of [`Kinds::to_bits`].
    #[must_use]
    pub fn from_bits(b: u8) -> Kinds {
        Kinds {
            date: b & 1 != 0,
            instant: b & 2 != 0,
        }
    }
}

/// What decided the resolved profile (spec/temporal.md §11 rule 2), echoed as
/// `temporal_profile_source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSource {
    /// A profile id was passed.
    Explicit,
    /// The bundle's values, or the request's own values, decided it.
    Detected,
    /// Nothing decided it: the date profile.
    Default,
}

impl ProfileSource {
    /// Wire spelling: `explicit`, `detected` or `default`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileSource::Explicit => "explicit",
            ProfileSource::Detected => "detected",
            ProfileSource::Default => "default",
        }
    }
}

/// A resolved profile (spec/temporal.md §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolution {
    /// The profile the request runs under.
    pub profile: Profile,
    /// What decided it.
    pub source: ProfileSource,
    /// `auto` met both kinds in the bundle (the `mixed_temporal_values` notice).
    pub mixed: bool,
}

impl Resolution {
    /// An explicit profile.
    #[must_use]
    pub fn explicit(profile: Profile) -> Self {
        Resolution {
            profile,
            source: ProfileSource::Explicit,
            mixed: false,
        }
    }
}

/// Resolves `choice` (spec/temporal.md §11 rule 1): an explicit profile stands; `auto` is
/// decided by the kinds of the base capture (`bundle`), then by the request's own temporal
/// values (`request`), else the date profile. Both kinds in the bundle → date, `mixed`.
/// (A request holding both kinds is refused before I/O by the caller.)
#[must_use]
pub fn resolve(choice: Choice, bundle: Kinds, request: Kinds) -> Resolution {
    if let Choice::Explicit(p) = choice {
        return Resolution::explicit(p);
    }
    if bundle.date && bundle.instant {
        return Resolution {
            profile: Profile::Date,
            source: ProfileSource::Detected,
            mixed: true,
        };
    }
    match bundle.decides().or_else(|| request.decides()) {
        Some(profile) => Resolution {
            profile,
            source: ProfileSource::Detected,
            mixed: false,
        },
        None => Resolution {
            profile: Profile::Date,
            source: ProfileSource::Default,
            mixed: false,
        },
    }
}

/// An instant at nanosecond precision (digits beyond nine ignored), with its offset kept.
#[derive(Debug, Clone, Copy)]
pub struct Instant {
    pub at: DateTime<FixedOffset>,
}

impl PartialEq for Instant {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}
impl Eq for Instant {}
impl PartialOrd for Instant {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Instant {
    fn cmp(&self, other: &Self) -> Ordering {
        self.at.cmp(&other.at)
    }
}

/// A calendar date `YYYY-MM-DD` with an exact round trip (spec/temporal.md §2.3).
#[must_use]
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !b
            .iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    {
        return None;
    }
    // Four, two and two ASCII digits: every such text round-trips through `%Y-%m-%d`
    // exactly when it names a real date (checked against chrono's parser in the tests).
    let num = |r: std::ops::Range<usize>| {
        b[r].iter()
            .fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'))
    };
    let year = i32::try_from(num(0..4)).ok()?;
    NaiveDate::from_ymd_opt(year, num(5..7), num(8..10))
}

/// The strict offset datetime of spec/temporal.md §2.1 (≤ 1 MiB).
#[must_use]
pub fn parse_offset_datetime(s: &str) -> Option<Instant> {
    if s.len() > 1024 * 1024 {
        return None;
    }
    let b = s.as_bytes();
    if b.len() < 20 || !b.is_ascii() {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19))
    {
        return None;
    }
    let date = parse_date(&s[..10])?;
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().ok();
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || mi > 59 || se > 59 {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let frac = &s[start..i];
        let mut padded: String = frac.chars().take(9).collect();
        while padded.len() < 9 {
            padded.push('0');
        }
        nanos = padded.parse().ok()?;
    }
    let offset_secs: i32 = match &s[i..] {
        "Z" => 0,
        rest if rest.len() == 6
            && (rest.starts_with('+') || rest.starts_with('-'))
            && rest.as_bytes()[3] == b':'
            && rest.as_bytes()[1..3].iter().all(u8::is_ascii_digit)
            && rest.as_bytes()[4..6].iter().all(u8::is_ascii_digit) =>
        {
            let oh: i32 = rest[1..3].parse().ok()?;
            let om: i32 = rest[4..6].parse().ok()?;
            if oh > 23 || om > 59 {
                return None;
            }
            if rest.starts_with('-') {
                if oh == 0 && om == 0 {
                    return None;
                }
                -(oh * 3600 + om * 60)
            } else {
                oh * 3600 + om * 60
            }
        }
        _ => return None,
    };
    let offset = FixedOffset::east_opt(offset_secs)?;
    let naive = date.and_hms_opt(h, mi, se)?.with_nanosecond(nanos)?;
    let at = naive.and_local_timezone(offset).single()?;
    Some(Instant { at })
}

/// The upgrade-target grammar (spec/temporal.md §2.2): an offset datetime whose offset is
/// `Z` or within ±14:00 (±14:00 exactly, or hours ≤ 13).
#[must_use]
pub fn parse_upgrade_target(s: &str) -> Option<Instant> {
    let i = parse_offset_datetime(s)?;
    if !s.ends_with('Z') {
        let off = &s[s.len() - 6..];
        let oh: u32 = off[1..3].parse().ok()?;
        let om: u32 = off[4..6].parse().ok()?;
        if oh > 14 || (oh == 14 && om != 0) {
            return None;
        }
    }
    Some(i)
}

/// Echo form of an instant `as_of` (spec/temporal.md §8 rule 6): the original offset, the
/// fraction trimmed of trailing zeros (dropped when zero), a zero offset written `Z`.
#[must_use]
pub fn normalise_instant_text(s: &str) -> Option<String> {
    parse_offset_datetime(s)?;
    let (main, offset) = if let Some(m) = s.strip_suffix('Z') {
        (m, "Z".to_owned())
    } else {
        let (m, o) = s.split_at(s.len() - 6);
        let o = if o == "+00:00" {
            "Z".to_owned()
        } else {
            o.to_owned()
        };
        (m, o)
    };
    let main = match main.split_once('.') {
        Some((head, frac)) => {
            let t = frac.trim_end_matches('0');
            if t.is_empty() {
                head.to_owned()
            } else {
                format!("{head}.{t}")
            }
        }
        None => main.to_owned(),
    };
    Some(format!("{main}{offset}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct date parse equals chrono's `%Y-%m-%d` parse with an exact round trip.
    #[test]
    fn parse_date_equals_the_chrono_round_trip() {
        let oracle = |s: &str| {
            let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
            (d.format("%Y-%m-%d").to_string() == s).then_some(d)
        };
        for y in [0, 1, 99, 1582, 1900, 1970, 2000, 2024, 2025, 2100, 9999] {
            for m in 0..=13 {
                for d in 0..=32 {
                    let s = format!("{y:04}-{m:02}-{d:02}");
                    assert_eq!(parse_date(&s), oracle(&s), "{s}");
                }
            }
        }
    }

    const VALID: &[&str] = &[
        "2026-09-26T12:34:56Z",
        "2026-09-26T12:34:56.1200+07:00",
        "2026-09-26T12:34:56+00:00",
        "2026-09-26T12:34:56-00:30",
    ];
    const INVALID: &[&str] = &[
        "2026-09-26T12:34:56",
        "2026-09-26T12:34:56-00:00",
        "2026-09-26T12:34:56+24:00",
        "2026-09-26T12:34:60Z",
        "2026-12-31T23:59:60Z",
        "2026-02-30T12:34:56Z",
        "2026-09-26T12:34:56,5Z",
        "2026-09-26t12:34:56Z",
        "2026-09-26T12:34:56z",
        "2026-09-26",
    ];

    #[test]
    fn offset_datetime_vectors_of_temporal_2_4() {
        for v in VALID {
            assert!(parse_offset_datetime(v).is_some(), "{v}");
        }
        for v in INVALID {
            assert!(parse_offset_datetime(v).is_none(), "{v}");
        }
    }

    #[test]
    fn upgrade_targets() {
        assert!(parse_upgrade_target("2026-01-02T03:04:05+14:00").is_some());
        assert!(parse_upgrade_target("2026-01-02T03:04:05-14:00").is_some());
        for v in ["+14:01", "+14:30", "-14:01", "+24:00", "-00:00"] {
            assert!(
                parse_upgrade_target(&format!("2026-01-02T03:04:05{v}")).is_none(),
                "{v}"
            );
        }
    }

    #[test]
    fn dates_and_ordering() {
        assert!(parse_date("2026-12-31").is_some());
        assert!(parse_date("2026-02-30").is_none());
        assert!(parse_date("2026-1-01").is_none());
        assert!(!Profile::Date.is_valid("2026-12-31T00:00:00Z"));
        assert_eq!(
            Profile::Instant.compare("2026-09-23T18:00:00+07:00", "2026-09-23T12:00:00Z"),
            Some(Ordering::Less)
        );
        assert_eq!(
            Profile::Instant.compare("2026-09-23T19:00:00+07:00", "2026-09-23T12:00:00.000Z"),
            Some(Ordering::Equal)
        );
        assert_eq!(
            Profile::Date.compare("2026-01-02", "2026-01-01"),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn instant_echo_normalisation() {
        assert_eq!(
            normalise_instant_text("2026-01-02T03:04:05.1200+00:00").as_deref(),
            Some("2026-01-02T03:04:05.12Z")
        );
        assert_eq!(
            normalise_instant_text("2026-01-02T03:04:05.000+07:00").as_deref(),
            Some("2026-01-02T03:04:05+07:00")
        );
    }
}
