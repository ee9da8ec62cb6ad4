//! Include paths: the skills from the root to the skill that defines an
//! entry, shared between entries.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of `resolve`, which it names whole"
)]
use super::*;

/// The skills from the root to the skill that defines an entry, shared
/// between entries so long chains cost memory once, not once per entry.
#[derive(Clone)]
pub struct IncludePath(pub(super) Arc<PathNode>);

pub(super) struct PathNode {
    pub(super) skill: SkillName,
    pub(super) parent: Option<IncludePath>,
    pub(super) len: usize,
    /// The ancestor [`PATH_HEAD`] skills long, on a longer path: where the
    /// head a long path is shown by ends, so showing it never walks the
    /// whole path.
    pub(super) head_end: Option<IncludePath>,
    /// Include overrides accumulated along the path, outer ones winning.
    pub(super) overrides: Arc<ValueMap>,
    /// The overrides written on the include edge from the parent to this
    /// skill (`None` when there were none), kept for `--explain`.
    pub(super) edge: Option<Arc<ValueMap>>,
    /// A 128-bit fingerprint of the skills from the root to here, computed
    /// the first time two paths are compared (see `PartialEq`).
    pub(super) fingerprint: std::sync::OnceLock<u128>,
}

impl Drop for PathNode {
    /// Unlinks the chain iteratively: the default recursive drop would
    /// overflow the stack on very deep include chains.
    fn drop(&mut self) {
        let mut parent = self.parent.take();
        while let Some(path) = parent {
            match Arc::try_unwrap(path.0) {
                Ok(mut node) => parent = node.parent.take(),
                Err(_) => break,
            }
        }
    }
}

impl IncludePath {
    pub(super) fn root(skill: SkillName) -> Self {
        Self(Arc::new(PathNode {
            skill,
            parent: None,
            len: 1,
            head_end: None,
            overrides: Arc::new(ValueMap::new()),
            edge: None,
            fingerprint: std::sync::OnceLock::new(),
        }))
    }

    pub(super) fn child(&self, skill: SkillName, edge_overrides: &ValueMap) -> Self {
        let (overrides, edge) = if edge_overrides.is_empty() {
            (Arc::clone(&self.0.overrides), None)
        } else {
            let mut merged = edge_overrides.clone();
            for (key, value) in self.0.overrides.iter() {
                merged.insert(key.clone(), value.clone());
            }
            (Arc::new(merged), Some(Arc::new(edge_overrides.clone())))
        };
        let head_end = if self.0.len == PATH_HEAD {
            Some(self.clone())
        } else {
            self.0.head_end.clone()
        };
        Self(Arc::new(PathNode {
            skill,
            parent: Some(self.clone()),
            len: self.0.len + 1,
            head_end,
            overrides,
            edge,
            fingerprint: std::sync::OnceLock::new(),
        }))
    }

    /// The path's fingerprint: each node's mixes its parent's with its skill
    /// name, computed once per node (walking up to the nearest node that has
    /// one, then down), so fingerprinting every path of a closure is linear.
    pub(super) fn fingerprint(&self) -> u128 {
        if let Some(done) = self.0.fingerprint.get() {
            return *done;
        }
        let mut todo = vec![self];
        let mut above = self.0.parent.as_ref();
        let mut acc = 0u128;
        while let Some(path) = above {
            if let Some(done) = path.0.fingerprint.get() {
                acc = *done;
                break;
            }
            todo.push(path);
            above = path.0.parent.as_ref();
        }
        for path in todo.iter().rev() {
            acc = mix(acc, path.0.skill.as_str());
            let _ = path.0.fingerprint.set(acc);
        }
        acc
    }

    /// The skills on the path, root first.
    pub fn skills(&self) -> Vec<&SkillName> {
        let mut out = Vec::with_capacity(self.0.len);
        let mut node = Some(self);
        while let Some(path) = node {
            out.push(&path.0.skill);
            node = path.0.parent.as_ref();
        }
        out.reverse();
        out
    }

    /// Number of skills on the path.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Always false: a path holds at least the root.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The last skill: the one that defines the entry.
    pub fn last(&self) -> &SkillName {
        &self.0.skill
    }

    /// The include overrides accumulated along the path (outer ones winning).
    pub fn overrides(&self) -> &ValueMap {
        &self.0.overrides
    }

    /// The path without its last skill; `None` for the root.
    pub fn parent(&self) -> Option<&IncludePath> {
        self.0.parent.as_ref()
    }

    /// Up to `count` skills ending at this one, root-most first.
    pub(super) fn last_skills(&self, count: usize) -> Vec<&str> {
        let mut out = Vec::with_capacity(count.min(self.0.len));
        let mut node = Some(self);
        while let Some(path) = node.filter(|_| out.len() < count) {
            out.push(path.0.skill.as_str());
            node = path.0.parent.as_ref();
        }
        out.reverse();
        out
    }
}

/// `root -> … -> skill`; a path longer than eleven skills as its first and
/// last five around its length, as errors show include paths, so showing
/// one costs the same however deep it is.
impl fmt::Display for IncludePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.0.len;
        let kept = match &self.0.head_end {
            Some(head_end) if len > PATH_HEAD + PATH_TAIL + 1 => {
                let mut kept = head_end.last_skills(PATH_HEAD);
                kept.extend(self.last_skills(PATH_TAIL));
                kept
            }
            _ => self.last_skills(len),
        };
        f.write_str(&join_kept(len, &kept))
    }
}

impl fmt::Debug for IncludePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.skills()).finish()
    }
}

/// `acc` extended by one skill name: two SipHash-1-3 runs with different
/// leading bytes, 128 bits in all.
pub(super) fn mix(acc: u128, skill: &str) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |tag: u8| {
        let mut hasher = std::hash::DefaultHasher::new();
        (tag, acc, skill).hash(&mut hasher);
        u128::from(hasher.finish())
    };
    (half(1) << 64) | half(2)
}

impl PartialEq for IncludePath {
    /// The same node, or the same length, last skill and 128-bit fingerprint
    /// of the skills on the way (as rustc's incremental fingerprints: a
    /// collision would take about 2^64 paths). Comparing skill by skill made
    /// `--explain`, which compares one path per entry, quadratic on long
    /// include chains.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.len == other.0.len
                && self.0.skill == other.0.skill
                && self.fingerprint() == other.fingerprint())
    }
}

impl Serialize for IncludePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let skills = self.skills();
        let mut seq = serializer.serialize_seq(Some(skills.len()))?;
        for skill in skills {
            seq.serialize_element(skill)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    pub(super) fn path(skills: &[&str]) -> IncludePath {
        let name = |s: &str| SkillName::new(s).unwrap();
        let mut path = IncludePath::root(name(skills[0]));
        for skill in &skills[1..] {
            path = path.child(name(skill), &ValueMap::new());
        }
        path
    }

    #[test]
    pub(super) fn paths_built_apart_compare_by_their_skills() {
        let a = path(&["a/root", "a/x", "a/y", "a/z"]);
        assert_eq!(a, path(&["a/root", "a/x", "a/y", "a/z"]));
        assert_eq!(a, a.clone());
        assert_ne!(a, path(&["a/root", "a/y", "a/x", "a/z"]));
        assert_ne!(a, path(&["a/root", "a/x", "a/z"]));
        assert_ne!(a, path(&["b/root", "a/x", "a/y", "a/z"]));
        // A prefix compared first keeps its fingerprint for the longer path.
        let prefix = a.parent().unwrap().clone();
        assert_eq!(prefix, path(&["a/root", "a/x", "a/y"]));
        assert_eq!(a, path(&["a/root", "a/x", "a/y", "a/z"]));
    }
}
