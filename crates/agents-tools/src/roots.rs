//! The workspace roots, and paths resolved beneath them.
//!
//! A path from a tool's arguments is resolved beneath one root without
//! following a link out of it: `openat2` with `RESOLVE_BENEATH` (one system
//! call, the kernel checks every component, `..` and link), or where the
//! kernel has no `openat2` a walk of our own, one component at a time with
//! `O_NOFOLLOW`, that follows a link inside the root the same way and
//! refuses one that leads out. Either way the result is a file descriptor:
//! what a tool then does happens through it (or through its parent
//! directory's), so a directory swapped for a link after it was resolved
//! changes nothing.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::error::{Rule, ToolError, shown};

/// The directories the file, git and shell tools act in. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Roots {
    list: Arc<[Root]>,
    walk: bool,
}

#[derive(Debug)]
pub(crate) struct Root {
    /// The canonical path.
    pub(crate) path: PathBuf,
    /// The path as given, when it differs (a link to the root, say).
    given: PathBuf,
    /// The root itself, held open: paths resolve against this, not its name.
    pub(crate) fd: OwnedFd,
}

/// A root that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use `{path}` as a root: {source}")]
pub struct RootsError {
    path: String,
    #[source]
    source: std::io::Error,
}

/// Set once `openat2` answered `ENOSYS`: from then on every path is walked.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// The most symbolic links one resolution follows (the kernel's limit).
const MAX_LINKS: usize = 40;

/// The longest path taken, in bytes (Linux's `PATH_MAX`, less its NUL).
const MAX_PATH: usize = 4095;

impl Roots {
    /// The roots `dirs`, each a directory that exists; a directory given
    /// twice (or by two names) counts once.
    pub fn new<I, P>(dirs: I) -> Result<Self, RootsError>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let mut list: Vec<Root> = Vec::new();
        for dir in dirs {
            let given = dir.as_ref();
            let failed = |source| RootsError {
                path: agents_core::text::shown_path(given),
                source,
            };
            let path = std::fs::canonicalize(given).map_err(failed)?;
            let fd = rustix::fs::open(
                &path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|err| failed(err.into()))?;
            if list.iter().all(|root| root.path != path) {
                list.push(Root {
                    given: given.to_path_buf(),
                    path,
                    fd,
                });
            }
        }
        Ok(Self {
            list: list.into(),
            walk: false,
        })
    }

    /// The current directory as the only root.
    pub fn current_dir() -> Result<Self, RootsError> {
        Self::new([Path::new(".")])
    }

    /// `dirs` as the roots, or the current directory when none is given.
    pub fn given_or_current(dirs: &[PathBuf]) -> Result<Self, RootsError> {
        if dirs.is_empty() {
            Self::current_dir()
        } else {
            Self::new(dirs)
        }
    }

    /// No roots: every file, git and shell call is refused.
    pub fn none() -> Self {
        Self {
            list: Arc::from(Vec::new()),
            walk: false,
        }
    }

    /// The roots' canonical paths, the first being where relative paths
    /// resolve.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.list.iter().map(|root| root.path.as_path())
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Resolves by the component-by-component walk even where the kernel
    /// has `openat2`: the walk is otherwise taken only on kernels without
    /// it, and its tests run it here.
    #[doc(hidden)]
    pub fn walking(mut self) -> Self {
        self.walk = true;
        self
    }

    /// The roots, held open.
    pub(crate) fn fds(&self) -> impl Iterator<Item = &OwnedFd> {
        self.list.iter().map(|root| &root.fd)
    }

    pub(crate) fn root(&self, index: usize) -> Option<&Root> {
        self.list.get(index)
    }

    /// Where `raw` lies: which root, and the path beneath it. Checks what
    /// can be checked on the text alone (NUL, an absolute path outside
    /// every root, a `..` above the root); links are the kernel's (or the
    /// walk's) to check, at [`open`](Self::open).
    pub(crate) fn locate(&self, raw: &str) -> Result<Place, ToolError> {
        if self.list.is_empty() {
            return Err(ToolError::refused(
                Rule::NoRoots,
                "there are no workspace roots to resolve a path in",
            ));
        }
        if raw.contains('\0') {
            return Err(ToolError::refused(
                Rule::NulByte,
                format!("the path `{}` holds a NUL byte", shown(raw)),
            ));
        }
        if raw.len() > MAX_PATH {
            return Err(ToolError::Failed(format!(
                "the path `{}` is {} bytes; the system takes at most {MAX_PATH}",
                shown(raw),
                raw.len()
            )));
        }
        let path = Path::new(raw);
        let (root, rel) = if path.is_absolute() {
            // The deepest root holding it, by its real name or as given.
            self.list
                .iter()
                .enumerate()
                .filter_map(|(index, root)| {
                    let rel = path
                        .strip_prefix(&root.path)
                        .or_else(|_| path.strip_prefix(&root.given))
                        .ok()?;
                    Some((index, rel))
                })
                .max_by_key(|(index, _)| self.list.get(*index).map(|r| r.path.as_os_str().len()))
                .ok_or_else(|| {
                    ToolError::refused(
                        Rule::OutsideRoots,
                        format!(
                            "`{}` is outside the workspace roots ({})",
                            shown(raw),
                            self.shown_roots()
                        ),
                    )
                })?
        } else {
            (0, path)
        };
        let mut depth = 0usize;
        for component in rel.components() {
            match component {
                Component::Normal(_) => depth += 1,
                Component::ParentDir => {
                    depth = depth.checked_sub(1).ok_or_else(|| {
                        ToolError::refused(
                            Rule::ParentDir,
                            format!("`{}` climbs above its root with `..`", shown(raw)),
                        )
                    })?;
                }
                _ => {}
            }
        }
        Ok(Place {
            root,
            rel: rel.to_path_buf(),
            raw: raw.to_owned(),
        })
    }

    /// Opens `place` with `flags` beneath its root. `O_NOFOLLOW` in `flags`
    /// refuses a link as the last component (links before it are followed
    /// while they stay inside the root).
    pub(crate) fn open(&self, place: &Place, flags: OFlags) -> Result<OwnedFd, ToolError> {
        let root = self.root_of(place)?;
        open_beneath(root.fd.as_fd(), &place.rel, flags, self.walk)
            .map_err(|errno| self.resolve_error(place, errno))
    }

    /// [`open`](Self::open) for a path relative to root `index` the tools
    /// found themselves (a walk's entries): errors are plain.
    pub(crate) fn open_found(&self, index: usize, rel: &Path, flags: OFlags) -> Option<OwnedFd> {
        let root = self.list.get(index)?;
        open_beneath(root.fd.as_fd(), rel, flags, self.walk).ok()
    }

    /// The parent directory of `place`, opened beneath the root, and the
    /// last component's name: for tools that write or replace one file.
    /// With `create`, missing directories on the way are made (each beneath
    /// the root too).
    pub(crate) fn open_parent(
        &self,
        place: &Place,
        create: bool,
    ) -> Result<(OwnedFd, OsString), ToolError> {
        let name = match place.rel.components().next_back() {
            Some(Component::Normal(name)) => name.to_owned(),
            _ => {
                return Err(ToolError::Failed(format!(
                    "`{}` does not name a file",
                    shown(&place.raw)
                )));
            }
        };
        let parent = place.rel.parent().unwrap_or(Path::new(""));
        let flags = OFlags::PATH | OFlags::DIRECTORY;
        let dir = Place {
            root: place.root,
            rel: parent.to_path_buf(),
            raw: place.raw.clone(),
        };
        match self.open(&dir, flags) {
            Err(ToolError::Io { source, .. })
                if create && source.kind() == std::io::ErrorKind::NotFound =>
            {
                self.make_dirs(&dir)?;
                Ok((self.open(&dir, flags)?, name))
            }
            other => Ok((other?, name)),
        }
    }

    /// Makes each missing directory of `dir`, one at a time, each in its
    /// parent opened beneath the root.
    fn make_dirs(&self, dir: &Place) -> Result<(), ToolError> {
        let mut prefix = PathBuf::new();
        for component in dir.rel.components() {
            let parent = Place {
                root: dir.root,
                rel: prefix.clone(),
                raw: dir.raw.clone(),
            };
            prefix.push(component);
            if let Component::Normal(name) = component {
                let parent = self.open(&parent, OFlags::PATH | OFlags::DIRECTORY)?;
                match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(err) => return Err(ToolError::io("create a directory for", &dir.raw, err)),
                }
            }
        }
        Ok(())
    }

    /// How a path found beneath root `index` is shown, so that it can be
    /// given back to a tool: relative to the first root, absolute in the
    /// others.
    pub(crate) fn display(&self, index: usize, rel: &Path) -> String {
        let text = match self.list.get(index) {
            Some(root) if index > 0 => root.path.join(rel).to_string_lossy().into_owned(),
            _ => rel.to_string_lossy().into_owned(),
        };
        agents_core::text::escape_control(&text).into_owned()
    }

    fn root_of(&self, place: &Place) -> Result<&Root, ToolError> {
        self.list
            .get(place.root)
            .ok_or_else(|| ToolError::Failed("the workspace roots changed during the call".into()))
    }

    fn shown_roots(&self) -> String {
        let mut roots: Vec<String> = self
            .list
            .iter()
            .take(4)
            .map(|root| format!("`{}`", agents_core::text::shown_path(&root.path)))
            .collect();
        if self.list.len() > 4 {
            roots.push(format!("and {} more", self.list.len() - 4));
        }
        roots.join(", ")
    }

    fn resolve_error(&self, place: &Place, errno: Errno) -> ToolError {
        let root = self
            .list
            .get(place.root)
            .map(|root| agents_core::text::shown_path(&root.path))
            .unwrap_or_default();
        match errno {
            // The text was checked for `..` already: a link did it.
            Errno::XDEV => ToolError::refused(
                Rule::SymlinkEscape,
                format!(
                    "`{}` leads out of the root `{root}` through a symbolic link",
                    shown(&place.raw)
                ),
            ),
            errno => ToolError::io("open", &place.raw, errno),
        }
    }
}

/// A path from the arguments, located beneath one root.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    /// Index of the root.
    pub(crate) root: usize,
    /// The path beneath it, as given (it may hold `.` and `..`).
    pub(crate) rel: PathBuf,
    /// The path as the arguments gave it, for messages.
    pub(crate) raw: String,
}

impl Place {
    /// `rel` with `.` and `..` taken away on the text: what a walk of the
    /// directory tree starts from. (`..` after a link may resolve
    /// elsewhere; both are beneath the root, and the walk's files are each
    /// opened beneath it again.)
    pub(crate) fn normalized(&self) -> PathBuf {
        let mut out = PathBuf::new();
        for component in self.rel.components() {
            match component {
                Component::Normal(name) => out.push(name),
                Component::ParentDir => {
                    out.pop();
                }
                _ => {}
            }
        }
        out
    }
}

/// Opens `rel` beneath `root`, never leaving it: `EXDEV` when a link or
/// `..` would.
fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    walk: bool,
) -> Result<OwnedFd, Errno> {
    let rel: &Path = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let flags = flags | OFlags::CLOEXEC;
    if walk || NO_OPENAT2.load(Ordering::Relaxed) {
        return walk_beneath(root, rel, flags);
    }
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(root, rel, flags, Mode::empty(), resolve) {
            // A rename raced a `..`: the kernel asks for a retry.
            Err(Errno::AGAIN) if tries < 3 => tries += 1,
            Err(Errno::NOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                return walk_beneath(root, rel, flags);
            }
            other => return other,
        }
    }
}

/// The walk: each directory opened `O_PATH | O_NOFOLLOW` from the one
/// before; a link read and its target's components resolved in its place
/// (an absolute target refused, as `RESOLVE_BENEATH` does); `..` goes back
/// to the directory held before, and never above the root.
fn walk_beneath(root: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let mut held: Vec<OwnedFd> = Vec::new();
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components(&mut pending, rel)?;
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        let last = pending.is_empty();
        let here = held.last().map_or(root, AsFd::as_fd);
        if name == ".." {
            held.pop().ok_or(Errno::XDEV)?;
            continue;
        }
        // Looked at first without following it (`O_DIRECTORY` with
        // `O_NOFOLLOW` would answer `ENOTDIR` for a link, not `ELOOP`).
        let opened = rustix::fs::openat(
            here,
            &name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let kind = FileType::from_raw_mode(rustix::fs::fstat(&opened)?.st_mode);
        if kind == FileType::Symlink && !(last && flags.contains(OFlags::NOFOLLOW)) {
            links += 1;
            if links > MAX_LINKS {
                return Err(Errno::LOOP);
            }
            let target = rustix::fs::readlinkat(here, &name, Vec::new())?;
            let target = Path::new(OsStr::from_bytes(target.as_bytes()));
            if target.is_absolute() {
                return Err(Errno::XDEV);
            }
            let mut expanded = VecDeque::new();
            push_components(&mut expanded, target)?;
            expanded.extend(pending.drain(..));
            pending = expanded;
            continue;
        }
        if last {
            if !flags.contains(OFlags::PATH) {
                // Not a link a moment ago; if it has become one since,
                // `O_NOFOLLOW` refuses it.
                return rustix::fs::openat(here, &name, flags | OFlags::NOFOLLOW, Mode::empty());
            }
            if kind == FileType::Symlink {
                // `O_PATH | O_NOFOLLOW` opens the link itself, as `openat` does.
                return Ok(opened);
            }
            if flags.contains(OFlags::DIRECTORY) && kind != FileType::Directory {
                return Err(Errno::NOTDIR);
            }
            return Ok(opened);
        }
        if kind != FileType::Directory {
            return Err(Errno::NOTDIR);
        }
        held.push(opened);
    }
    // Nothing left: the path named a directory already held (the root, or
    // one reached by `..`).
    let here = held.last().map_or(root, AsFd::as_fd);
    rustix::fs::openat(here, ".", flags, Mode::empty())
}

fn push_components(out: &mut VecDeque<OsString>, path: &Path) -> Result<(), Errno> {
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push_back(name.to_owned()),
            Component::ParentDir => out.push_back("..".into()),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err(Errno::XDEV),
        }
    }
    Ok(())
}
