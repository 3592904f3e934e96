//! Redis URLs without their credentials, for every message, log line and report that shows one.
//!
//! A Redis URL may carry a user and a password (`redis://user:pass@host:port`,
//! `redis://:pass@host:port`, `rediss://...`) or, in its query, a password for a Unix socket
//! (`redis+unix:///path?pass=...`). [`redact`] replaces the user and password together by `***`
//! (the user is sensitive too: it names the account to attack) and every query value whose key
//! names a credential, and keeps what a reader needs to find the server: scheme, host, port,
//! database. It never fails: text the `url` crate cannot parse is redacted by hand (everything
//! before the last `@` of the authority).

/// The marker that replaces credentials.
pub const REDACTED: &str = "***";

/// Query keys whose values are credentials (compared case-insensitively, by substring).
const SECRET_QUERY_KEYS: [&str; 4] = ["pass", "user", "token", "auth"];

/// `urls` (one URL or a comma-separated list, as `sweep --redis` and `Connection::open` take)
/// with every user, password and credential query value replaced by `***`. Guarantees: no byte of
/// a URL's userinfo, and no value of a query key containing `pass`, `user`, `token` or `auth`,
/// appears in the result.
pub fn redact(urls: &str) -> String {
    urls.split(',')
        .map(|u| redact_one(u.trim()))
        .collect::<Vec<_>>()
        .join(",")
}

/// A command line or other text with every word that holds a URL (`SCHEME://...`, also as
/// `--flag=URL`) redacted by [`redact`]; other words unchanged. Words are separated by spaces.
pub fn redact_words(text: &str) -> String {
    text.split(' ')
        .map(|w| match w.find("://") {
            None => w.to_owned(),
            Some(_) => match w.split_once('=') {
                Some((flag, value)) if flag.starts_with('-') && !flag.contains("://") => {
                    format!("{flag}={}", redact(value))
                }
                _ => redact(w),
            },
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn redact_one(u: &str) -> String {
    match url::Url::parse(u) {
        // A Unix socket URL has no host (nor userinfo); any other URL without a host is not
        // what it seems (`u:pw@host` parses as scheme `u`), so it is redacted by hand.
        Ok(parsed) if parsed.has_host() || parsed.scheme().ends_with("unix") => {
            from_parsed(&parsed)
        }
        _ => by_hand(u),
    }
}

fn from_parsed(u: &url::Url) -> String {
    let mut out = format!("{}://", u.scheme());
    if !u.username().is_empty() || u.password().is_some() {
        out.push_str(REDACTED);
        out.push('@');
    }
    if let Some(host) = u.host_str() {
        out.push_str(host);
    }
    if let Some(port) = u.port() {
        out.push_str(&format!(":{port}"));
    }
    out.push_str(u.path());
    if u.query().is_some() {
        let pairs: Vec<String> = u
            .query_pairs()
            .map(|(k, v)| {
                let lower = k.to_ascii_lowercase();
                if SECRET_QUERY_KEYS.iter().any(|s| lower.contains(s)) {
                    format!("{k}={REDACTED}")
                } else {
                    format!("{k}={v}")
                }
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

/// For text that is not a URL the `url` crate accepts: everything after `://` up to the last `@`
/// before any `?` is taken as credentials (a password with a raw `/` or `@` ends the authority
/// early for a parser, so the last `@` is the safe boundary). A query is dropped whole (it cannot
/// be parsed, so it cannot be shown safely).
fn by_hand(u: &str) -> String {
    let (scheme, rest) = match u.find("://") {
        Some(i) => (&u[..i + 3], &u[i + 3..]),
        None => ("", u),
    };
    let (before_query, query) = match rest.find('?') {
        Some(q) => (&rest[..q], Some(())),
        None => (rest, None),
    };
    let address = match before_query.rfind('@') {
        Some(at) => format!("{REDACTED}@{}", &before_query[at + 1..]),
        None => before_query.to_owned(),
    };
    let query = query.map_or(String::new(), |()| format!("?{REDACTED}"));
    format!("{scheme}{address}{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_and_the_address_kept() {
        let cases = [
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            ("redis://127.0.0.1:6379/2", "redis://127.0.0.1:6379/2"),
            (
                "redis://:WRONGPASS@127.0.0.1:6379",
                "redis://***@127.0.0.1:6379",
            ),
            (
                "redis://alice:s3cr%40t@127.0.0.1:6379/0",
                "redis://***@127.0.0.1:6379/0",
            ),
            ("redis://alice@localhost:1", "redis://***@localhost:1"),
            (
                "rediss://bob:hunter2@cache.example.invalid:6380",
                "rediss://***@cache.example.invalid:6380",
            ),
            (
                "redis+unix:///run/redis.sock?db=1&pass=hunter2",
                "redis+unix:///run/redis.sock?db=1&pass=***",
            ),
            (
                " redis://:p1@127.0.0.1:7000, redis://u:p2@127.0.0.1:7001,redis://127.0.0.1:7002",
                "redis://***@127.0.0.1:7000,redis://***@127.0.0.1:7001,redis://127.0.0.1:7002",
            ),
            // Not URLs the parser accepts: redacted by hand.
            (
                "redis://:pa ss@127.0.0.1:6379",
                "redis://***@127.0.0.1:6379",
            ),
            ("u:pw@host:1/0?password=x", "***@host:1/0?***"),
            ("not a url", "not a url"),
        ];
        for (given, expected) in cases {
            assert_eq!(redact(given), expected, "{given:?}");
        }
    }

    /// url's IDNA back end is the stub (the workspace's Cargo.toml), which maps no host outside
    /// ASCII. Only the special schemes (`http`, `ws`, `ftp`, ...) take their host through IDNA:
    /// a Redis URL's host is opaque to url, so one outside ASCII parses as it did with a Unicode
    /// back end (percent-encoded), and is redacted the same way.
    #[test]
    fn the_idna_stub_leaves_redis_urls_as_they_were() {
        assert!(url::Url::parse("http://bücher.example.invalid/").is_err());
        let u = "redis://:hunter2@bücher.example.invalid:6379";
        let parsed = url::Url::parse(u).unwrap();
        assert_eq!(parsed.host_str(), Some("b%C3%BCcher.example.invalid"));
        assert_eq!(
            redact(u),
            "redis://***@b%C3%BCcher.example.invalid:6379",
            "{u}"
        );
    }

    #[test]
    fn command_lines_are_redacted_word_by_word() {
        assert_eq!(
            redact_words("sweep --sketch hll --redis redis://:pw@127.0.0.1:1 --out x"),
            "sweep --sketch hll --redis redis://***@127.0.0.1:1 --out x"
        );
        assert_eq!(
            redact_words("sweep --redis=rediss://u:pw@h:1,redis://:pw@h:2"),
            "sweep --redis=rediss://***@h:1,redis://***@h:2"
        );
    }

    #[test]
    fn no_secret_survives_in_any_position() {
        for secret in ["WRONGPASS", "hunter2", "alice", "pzz@qq:xw/yy"] {
            let enc: String = url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
            for u in [
                format!("redis://:{enc}@127.0.0.1:1"),
                format!("redis://{enc}:{enc}@127.0.0.1:1/3"),
                format!("rediss://{enc}@[::1]:1"),
                format!("redis://:{secret}@127.0.0.1:1"),
                format!("redis://127.0.0.1:1,redis://:{enc}@127.0.0.1:2"),
                format!("redis+unix:///s.sock?password={enc}"),
            ] {
                let r = redact(&u);
                let pieces = secret.split(['@', ':', '/']).filter(|p| p.len() > 1);
                assert!(
                    !r.contains(secret)
                        && !r.contains(&enc)
                        && pieces.clone().all(|p| !r.contains(p)),
                    "{u:?} -> {r:?} keeps {secret:?}"
                );
                assert!(r.contains("***"), "{u:?} -> {r:?}");
            }
        }
    }
}
