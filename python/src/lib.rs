//! The native half of the `agents_registry` Python package.

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_native")]
fn agents_registry_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
