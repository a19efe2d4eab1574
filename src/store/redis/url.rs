//! `redis://HOST:PORT[,HOST:PORT...][/NAME]`: the seed nodes of a cluster and a store name.

use crate::error::{Error, Result};
use crate::store::codec::redis::valid_name;

/// The store name used when a URL names none.
pub const DEFAULT_NAME: &str = "simstore";

/// A parsed store URL on Redis Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// `host:port` of each seed node.
    pub seeds: Vec<String>,
    /// The store's name (its key prefix).
    pub name: String,
    /// Replicas every write waits for (`?replicas-ack=N`); `None`: 1 when every master has
    /// a replica, else 0.
    pub replicas_ack: Option<u32>,
}

impl RedisUrl {
    /// Whether `s` is meant as a Redis URL (starts with `redis://`).
    pub fn is_redis(s: &str) -> bool {
        s.starts_with(crate::store::REDIS_SCHEME)
    }

    /// Parses `redis://HOST:PORT[,HOST:PORT...][/NAME][?replicas-ack=N]`.
    ///
    /// Errors: [`Error::InvalidUrl`] saying what is wrong.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = |why: &str| Error::InvalidUrl {
            url: s.to_owned(),
            reason: why.to_owned(),
        };
        let rest = s
            .strip_prefix(crate::store::REDIS_SCHEME)
            .ok_or_else(|| bad("it does not start with redis://"))?;
        let (rest, replicas_ack) = match rest.split_once('?') {
            None => (rest, None),
            Some((rest, query)) => match query.strip_prefix("replicas-ack=").map(str::parse) {
                Some(Ok(n)) => (rest, Some(n)),
                _ => return Err(bad("the only option is ?replicas-ack=N (N: 0, 1, 2...)")),
            },
        };
        let (hosts, name) = match rest.split_once('/') {
            Some((h, "")) => (h, DEFAULT_NAME),
            Some((h, n)) => (h, n),
            None => (rest, DEFAULT_NAME),
        };
        if !valid_name(name) {
            return Err(bad(
                "the store name must be 1 to 64 of A-Z a-z 0-9 _ - . (e.g. redis://127.0.0.1:7000/pages)",
            ));
        }
        let seeds: Vec<String> = hosts.split(',').map(str::to_owned).collect();
        for seed in &seeds {
            let port = seed.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>()));
            if !matches!(port, Some((h, Ok(_))) if !h.is_empty()) {
                return Err(bad(&format!("{seed:?} is not HOST:PORT")));
            }
        }
        Ok(Self {
            seeds,
            name: name.to_owned(),
            replicas_ack,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_seeds_and_name() {
        let u = RedisUrl::parse("redis://127.0.0.1:7000,localhost:7001/pages").unwrap();
        assert_eq!(u.seeds, ["127.0.0.1:7000", "localhost:7001"]);
        assert_eq!(u.name, "pages");
        assert_eq!(RedisUrl::parse("redis://h:1").unwrap().name, DEFAULT_NAME);
        assert_eq!(RedisUrl::parse("redis://h:1/").unwrap().name, DEFAULT_NAME);
        let u = RedisUrl::parse("redis://h:1/x?replicas-ack=0").unwrap();
        assert_eq!((u.name.as_str(), u.replicas_ack), ("x", Some(0)));
        assert!(RedisUrl::parse("redis://h:1/x?wait=1").is_err());
        for bad in [
            "http://h:1",
            "redis://h/x",
            "redis://:1/x",
            "redis://h:1/a:b",
            "redis://h:x",
        ] {
            assert!(RedisUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
