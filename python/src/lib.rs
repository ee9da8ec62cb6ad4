//! The native half of the `agents_registry` Python package: the registry
//! service of the `agents` CLI (`agents_registry::SkillRegistryService`)
//! and its typed results as Python classes. The pure-Python half
//! (`python/agents_registry/`) holds the exceptions, the type stubs and the
//! re-exports.

mod call;
mod convert;
mod error;
mod model;
mod service;

use pyo3::prelude::*;

/// The allocator of the `agents` binary, for the Rust half's own
/// allocations (Python's are untouched): reading and resolving a large
/// closure is allocation-bound, and the CLI measured mimalloc faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
#[pyo3(name = "_native")]
fn agents_registry_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<model::PySkill>()?;
    module.add_class::<model::PySkillItem>()?;
    module.add_class::<model::PySkillSummary>()?;
    module.add_class::<model::PyToolSpec>()?;
    module.add_class::<model::PyResolvedToolEntry>()?;
    module.add_class::<model::PySummary>()?;
    module.add_class::<model::PyConflict>()?;
    module.add_class::<model::PyDiscoveryResult>()?;
    module.add_class::<service::PyRepository>()?;
    module.add_class::<service::PyToolRegistry>()?;
    module.add_class::<service::PyService>()?;
    module.add_class::<service::PySkillRegistry>()?;
    module.add_class::<call::PyToolResult>()?;
    Ok(())
}
