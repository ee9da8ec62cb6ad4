//! Python values to JSON and back, and the arguments every method reads.
//!
//! Python to JSON is written here, not taken from a serde bridge: a dict
//! nested a million deep is a few lines of Python, and a recursive walk of
//! it would overflow the stack and take the interpreter down. This walk
//! stops at [`MAX_NESTING`] with an error naming where; the definition
//! parser then applies the configured (lower) `limits.max_depth` with its
//! own message. JSON to Python only ever walks values the registry parsed
//! or decoded, which are bounded in depth already.

use std::path::PathBuf;

use agents_core::text::{MAX_ECHO_BYTES, shorten};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::error::{Class, Failure};

/// The deepest nesting of dicts and lists read from Python (the definition
/// parser's own hard limit).
pub(crate) const MAX_NESTING: usize = agents_definition::HARD_MAX_DEPTH;

/// The type name of `value`, for messages.
pub(crate) fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "?".to_owned())
}

/// A wrong-type error about `what` (`argument \`name\``, `\`tools[2]\``).
pub(crate) fn wrong_type(what: &str, expected: &str, value: &Bound<'_, PyAny>) -> Failure {
    Failure::new(
        Class::ArgumentType,
        "invalid_argument",
        format!(
            "{what}: expected {expected}, got `{}`",
            shorten(&type_name(value), MAX_ECHO_BYTES)
        ),
    )
}

/// `value` as JSON: `None`, `bool`, `int` (64-bit), finite `float`, `str`,
/// a `dict` with `str` keys, a `list` or `tuple`. `what` names the value in
/// errors; the path inside it is added.
pub(crate) fn to_json(value: &Bound<'_, PyAny>, what: &str) -> Result<Value, Failure> {
    let mut path = String::new();
    walk(value, what, &mut path, 0)
}

fn at(what: &str, path: &str) -> String {
    if path.is_empty() {
        what.to_owned()
    } else {
        format!("{what} at `{}`", shorten(path, MAX_ECHO_BYTES))
    }
}

fn walk(
    value: &Bound<'_, PyAny>,
    what: &str,
    path: &mut String,
    depth: usize,
) -> Result<Value, Failure> {
    if value.is_none() {
        return Ok(Value::Null);
    }
    // `bool` before `int`: in Python it is one.
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if value.cast::<PyInt>().is_ok() {
        if let Ok(number) = value.extract::<i64>() {
            return Ok(Value::from(number));
        }
        if let Ok(number) = value.extract::<u64>() {
            return Ok(Value::from(number));
        }
        return Err(Failure::new(
            Class::Validation,
            "invalid_argument",
            format!(
                "{}: integer out of the 64-bit range JSON values are kept in",
                at(what, path)
            ),
        ));
    }
    if let Ok(number) = value.cast::<PyFloat>() {
        return serde_json::Number::from_f64(number.value())
            .map(Value::Number)
            .ok_or_else(|| {
                Failure::new(
                    Class::Validation,
                    "invalid_argument",
                    format!(
                        "{}: `{}` is not a number JSON can hold",
                        at(what, path),
                        number.value()
                    ),
                )
            });
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Value::String(string_of(text, what, path)?));
    }
    if depth >= MAX_NESTING {
        return Err(Failure::new(
            Class::Validation,
            "invalid_argument",
            format!(
                "{}: nested deeper than {MAX_NESTING} levels",
                at(what, path)
            ),
        ));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(wrong_type(
                    &format!("{}: a key", at(what, path)),
                    "`str`",
                    &key,
                ));
            };
            let key = string_of(key, what, path)?;
            let before = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
            let item = walk(&item, what, path, depth + 1)?;
            path.truncate(before);
            map.insert(key, item);
        }
        return Ok(Value::Object(map));
    }
    let Some(items) = sequence_items(value) else {
        return Err(wrong_type(
            &at(what, path),
            "`None`, `bool`, `int`, `float`, `str`, a `dict` or a `list`",
            value,
        ));
    };
    let mut array = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let before = path.len();
        path.push_str(&format!("[{index}]"));
        array.push(walk(item, what, path, depth + 1)?);
        path.truncate(before);
    }
    Ok(Value::Array(array))
}

/// The items of a `list` or a `tuple` (`None` for anything else: a `str`
/// or a `dict` iterates too, but is not a sequence of values here).
pub(crate) fn sequence_items<'py>(value: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = value.cast::<PyList>() {
        Some(list.iter().collect())
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        Some(tuple.iter().collect())
    } else {
        None
    }
}

/// A Python `str` as UTF-8 (a lone surrogate has no UTF-8 form).
fn string_of(text: &Bound<'_, PyString>, what: &str, path: &str) -> Result<String, Failure> {
    text.to_cow().map(|text| text.into_owned()).map_err(|_| {
        Failure::new(
            Class::Validation,
            "invalid_argument",
            format!(
                "{}: the string is not valid Unicode text (a lone surrogate)",
                at(what, path)
            ),
        )
    })
}

/// A `str` argument.
pub(crate) fn str_arg(value: &Bound<'_, PyAny>, what: &str) -> Result<String, Failure> {
    match value.cast::<PyString>() {
        Ok(text) => string_of(text, &format!("argument `{what}`"), ""),
        Err(_) => Err(wrong_type(&format!("argument `{what}`"), "`str`", value)),
    }
}

/// An optional `str` argument (`None` for none).
pub(crate) fn opt_str_arg(
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> Result<Option<String>, Failure> {
    match value {
        Some(value) if !value.is_none() => str_arg(value, what).map(Some),
        _ => Ok(None),
    }
}

/// A `str` or `os.PathLike` argument, as a path.
pub(crate) fn path_arg(value: &Bound<'_, PyAny>, what: &str) -> Result<PathBuf, Failure> {
    if let Ok(text) = value.cast::<PyString>() {
        return string_of(text, &format!("argument `{what}`"), "").map(PathBuf::from);
    }
    value.extract::<PathBuf>().map_err(|_| {
        wrong_type(
            &format!("argument `{what}`"),
            "`str` or `os.PathLike`",
            value,
        )
    })
}

/// An optional `bool` argument (`default` when not given).
pub(crate) fn bool_arg(
    value: Option<&Bound<'_, PyAny>>,
    what: &str,
    default: bool,
) -> Result<bool, Failure> {
    let Some(value) = value else {
        return Ok(default);
    };
    value
        .cast::<PyBool>()
        .map(|flag| flag.is_true())
        .map_err(|_| wrong_type(&format!("argument `{what}`"), "`bool`", value))
}

/// `value` as a Python object. Values come from the registry (parsed
/// definitions, decoded rows), whose nesting is bounded.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => {
            if let Some(int) = number.as_i64() {
                int.into_pyobject(py)?.into_any()
            } else if let Some(int) = number.as_u64() {
                int.into_pyobject(py)?.into_any()
            } else {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => map_to_py(py, map)?.into_any(),
    })
}

/// A JSON object as a `dict`, in its order.
pub(crate) fn map_to_py<'py>(
    py: Python<'py>,
    map: &serde_json::Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, item) in map {
        dict.set_item(key, to_py(py, item)?)?;
    }
    Ok(dict)
}

/// An optional JSON value as a Python object (`None` for none).
pub(crate) fn opt_to_py<'py>(
    py: Python<'py>,
    value: Option<&Value>,
) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Some(value) => to_py(py, value),
        None => Ok(py.None().into_bound(py)),
    }
}

/// `text` as Python's `repr` writes a `str` (quotes and escapes), cut to
/// [`MAX_ECHO_BYTES`] first: a `repr` is for people.
pub(crate) fn py_repr(py: Python<'_>, text: &str) -> String {
    let short = shorten(text, MAX_ECHO_BYTES);
    PyString::new(py, &short)
        .repr()
        .map(|repr| repr.to_string())
        .unwrap_or_else(|_| format!("{short:?}"))
}

/// An optional string's `repr` (`None` for none).
pub(crate) fn opt_repr(py: Python<'_>, text: Option<&str>) -> String {
    text.map_or_else(|| "None".to_owned(), |text| py_repr(py, text))
}
