//! `ascendir.TensorDesc`, `ascendir.Tensor` and the read-only byte buffer behind `Tensor.numpy()`.

use std::sync::Arc;

use ascendir_ir::tensor::{memory_size_in_bytes, DeviceType, Shape};
use ascendir_ir::{DataType, Format, IrError, NodeId, Side, Tensor, TensorDesc};
use bytes::Bytes;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use super::attrs::{AttrOwner, PyAttrMap};
use super::graph::PyGraph;
use super::op_desc::PyOpDesc;
use super::types::{extract_dtype, extract_format, py_dtype, py_format};
use crate::errors::IntoPyResult;

/// Where a Python `TensorDesc` object's data lives.
#[derive(Debug)]
pub enum DescLoc {
    /// A standalone descriptor (value semantics: shared, copied on write).
    Owned(Arc<TensorDesc>),
    /// A port of a node in a graph: reads and writes go to the node.
    Port {
        /// The graph.
        graph: Py<PyGraph>,
        /// The node.
        node: NodeId,
        /// Input or output.
        side: Side,
        /// Port index.
        index: usize,
    },
    /// A port of a standalone `OpDesc` object.
    Op {
        /// The op desc object.
        op: Py<PyOpDesc>,
        /// Input or output.
        side: Side,
        /// Port index.
        index: usize,
    },
}

/// A tensor descriptor: shape, dtype, format, origin info, extension metadata and attributes.
///
/// A descriptor obtained from a node (`op_desc.input_desc(0)`) is a view: setting a property
/// changes the node. A descriptor built with `TensorDesc(...)` is a value.
#[pyclass(name = "TensorDesc", module = "ascendir")]
#[derive(Debug)]
pub struct PyTensorDesc {
    /// Where the data lives.
    pub loc: DescLoc,
}

fn shape_of(obj: &Bound<'_, PyAny>) -> PyResult<Shape> {
    let dims: Vec<i64> = obj.extract()?;
    for (i, &d) in dims.iter().enumerate() {
        if d < -2 || (d == -2 && dims.len() != 1) {
            return Err(IrError::InvalidArgument(format!(
                "dim {i} of shape {dims:?} is {d}: dims are ≥ 0, -1 (unknown) or a lone -2 (unknown rank)"
            )))
            .py();
        }
    }
    Ok(Shape::from_vec(dims))
}

impl PyTensorDesc {
    /// A standalone descriptor object.
    pub fn owned(desc: Arc<TensorDesc>) -> Self {
        PyTensorDesc {
            loc: DescLoc::Owned(desc),
        }
    }

    /// Read the descriptor.
    pub fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&TensorDesc) -> R) -> PyResult<R> {
        match &self.loc {
            DescLoc::Owned(d) => Ok(f(d)),
            DescLoc::Port {
                graph,
                node,
                side,
                index,
            } => PyGraph::try_read(graph.bind(py), |g| {
                g.op(*node)?.port(*side, *index).map(|p| f(&p.desc))
            }),
            DescLoc::Op { op, side, index } => {
                PyOpDesc::try_with(op.bind(py), |od| od.port(*side, *index).map(|p| f(&p.desc)))
            }
        }
    }

    /// Change the descriptor (through to its node or op when it is a view).
    pub fn with_mut<R>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut TensorDesc) -> R,
    ) -> PyResult<R> {
        match &mut self.loc {
            DescLoc::Owned(d) => Ok(f(Arc::make_mut(d))),
            DescLoc::Port {
                graph,
                node,
                side,
                index,
            } => PyGraph::try_write(graph.bind(py), |g| {
                g.modify_op(*node, |op| op.port_desc_mut(*side, *index).map(f))?
            }),
            DescLoc::Op { op, side, index } => {
                PyOpDesc::try_with_mut(op.bind(py), |od| od.port_desc_mut(*side, *index).map(f))
            }
        }
    }

    /// A shared copy of the current descriptor value.
    pub fn snapshot(&self, py: Python<'_>) -> PyResult<Arc<TensorDesc>> {
        match &self.loc {
            DescLoc::Owned(d) => Ok(d.clone()),
            _ => self.with(py, |d| Arc::new(d.clone())),
        }
    }

    /// Extract a descriptor value from a Python `TensorDesc` argument.
    pub fn extract_arc(obj: &Bound<'_, PyAny>) -> PyResult<Arc<TensorDesc>> {
        let td = obj.cast::<PyTensorDesc>()?;
        let r = td.borrow();
        r.snapshot(obj.py())
    }

    fn ext_get<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&ascendir_ir::ExtMeta) -> R,
    ) -> PyResult<R> {
        self.with(py, |d| match &d.ext {
            Some(e) => f(e),
            None => f(&ascendir_ir::ExtMeta::default()),
        })
    }

    fn ext_set(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut ascendir_ir::ExtMeta),
    ) -> PyResult<()> {
        self.with_mut(py, |d| f(d.ext_mut()))
    }
}

#[pymethods]
impl PyTensorDesc {
    #[new]
    #[pyo3(signature = (shape=None, dtype=None, format=None, *, name=None, origin_shape=None, origin_format=None, origin_dtype=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        shape: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        format: Option<&Bound<'_, PyAny>>,
        name: Option<&str>,
        origin_shape: Option<&Bound<'_, PyAny>>,
        origin_format: Option<&Bound<'_, PyAny>>,
        origin_dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            let mut d = TensorDesc::default();
            if let Some(s) = shape {
                d.shape = shape_of(s)?;
            }
            if let Some(t) = dtype {
                d.dtype = extract_dtype(t)?;
            }
            if let Some(f) = format {
                d.format = extract_format(f)?;
            }
            if let Some(n) = name {
                d.name = Some(n.into());
            }
            if let Some(s) = origin_shape {
                d.origin_shape = Some(Box::new(shape_of(s)?));
            }
            if let Some(f) = origin_format {
                d.origin_format = extract_format(f)?;
            }
            if let Some(t) = origin_dtype {
                d.origin_dtype = extract_dtype(t)?;
            }
            Ok(PyTensorDesc::owned(Arc::new(d)))
        })
    }

    /// Dimensions (`-1` unknown, `(-2,)` unknown rank, `()` scalar).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        crate::errors::guard_res(|| {
            let dims = self.with(py, |d| d.shape.to_vec())?;
            PyTuple::new(py, dims)
        })
    }
    #[setter]
    fn set_shape(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let s = shape_of(value)?;
            self.with_mut(py, |d| d.shape = s)
        })
    }

    /// Element type.
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| py_dtype(py, self.with(py, |d| d.dtype)?))
    }
    #[setter]
    fn set_dtype(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let t = extract_dtype(value)?;
            self.with_mut(py, |d| d.dtype = t)
        })
    }

    /// Layout (a `Format` member, or an int carrying sub-format / C0 bits).
    #[getter]
    fn format(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| py_format(py, self.with(py, |d| d.format)?))
    }
    #[setter]
    fn set_format(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let f = extract_format(value)?;
            self.with_mut(py, |d| d.format = f)
        })
    }

    /// Shape before optimization, or `None` when it was never set.
    #[getter]
    fn origin_shape<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        crate::errors::guard_res(|| {
            let dims = self.with(py, |d| d.origin_shape.as_ref().map(|s| s.to_vec()))?;
            dims.map(|v| PyTuple::new(py, v)).transpose()
        })
    }
    #[setter]
    fn set_origin_shape(
        &mut self,
        py: Python<'_>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let s = value.map(shape_of).transpose()?;
            self.with_mut(py, |d| d.origin_shape = s.map(Box::new))
        })
    }

    /// Format before optimization.
    #[getter]
    fn origin_format(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| py_format(py, self.with(py, |d| d.origin_format)?))
    }
    #[setter]
    fn set_origin_format(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let f = extract_format(value)?;
            self.with_mut(py, |d| d.origin_format = f)
        })
    }

    /// Element type before optimization (`UNDEFINED` when never set).
    #[getter]
    fn origin_dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard_res(|| py_dtype(py, self.with(py, |d| d.origin_dtype)?))
    }
    #[setter]
    fn set_origin_dtype(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let t = extract_dtype(value)?;
            self.with_mut(py, |d| d.origin_dtype = t)
        })
    }

    /// The descriptor's name (`None` when unnamed).
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<Option<String>> {
        crate::errors::guard_res(|| self.with(py, |d| d.name.as_deref().map(str::to_string)))
    }
    #[setter]
    fn set_name(&mut self, py: Python<'_>, value: Option<String>) -> PyResult<()> {
        crate::errors::guard_res(|| self.with_mut(py, |d| d.name = value.map(|s| s.into())))
    }

    /// Extension metadata: size in bytes.
    #[getter]
    fn size(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.size))
    }
    #[setter]
    fn set_size(&mut self, py: Python<'_>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.size = v))
    }
    /// Extension metadata: weight size.
    #[getter]
    fn weight_size(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.weight_size))
    }
    #[setter]
    fn set_weight_size(&mut self, py: Python<'_>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.weight_size = v))
    }
    /// Extension metadata: data offset.
    #[getter]
    fn data_offset(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.data_offset))
    }
    #[setter]
    fn set_data_offset(&mut self, py: Python<'_>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.data_offset = v))
    }
    /// Extension metadata: reuse-input flag.
    #[getter]
    fn reuse_input(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.reuse_input))
    }
    #[setter]
    fn set_reuse_input(&mut self, py: Python<'_>, v: bool) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.reuse_input = v))
    }
    /// Extension metadata: index of the reused input.
    #[getter]
    fn reuse_input_index(&self, py: Python<'_>) -> PyResult<u32> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.reuse_input_index))
    }
    #[setter]
    fn set_reuse_input_index(&mut self, py: Python<'_>, v: u32) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.reuse_input_index = v))
    }
    /// Extension metadata: output-tensor flag.
    #[getter]
    fn output_tensor(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.output_tensor))
    }
    #[setter]
    fn set_output_tensor(&mut self, py: Python<'_>, v: bool) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.output_tensor = v))
    }
    /// Extension metadata: input-tensor flag.
    #[getter]
    fn input_tensor(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.input_tensor))
    }
    #[setter]
    fn set_input_tensor(&mut self, py: Python<'_>, v: bool) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.input_tensor = v))
    }
    /// Extension metadata: real dimension count.
    #[getter]
    fn real_dim_cnt(&self, py: Python<'_>) -> PyResult<u32> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.real_dim_cnt))
    }
    #[setter]
    fn set_real_dim_cnt(&mut self, py: Python<'_>, v: u32) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.real_dim_cnt = v))
    }
    /// Extension metadata: `"NPU"` or `"CPU"`.
    #[getter]
    fn device_type(&self, py: Python<'_>) -> PyResult<&'static str> {
        crate::errors::guard_res(|| {
            self.ext_get(py, |e| match e.device_type {
                DeviceType::Npu => "NPU",
                DeviceType::Cpu => "CPU",
            })
        })
    }
    #[setter]
    fn set_device_type(&mut self, py: Python<'_>, v: &str) -> PyResult<()> {
        crate::errors::guard_res(|| {
            let dt = match v.to_ascii_uppercase().as_str() {
                "NPU" => DeviceType::Npu,
                "CPU" => DeviceType::Cpu,
                _ => {
                    return Err(IrError::InvalidArgument(format!(
                        "device type must be 'NPU' or 'CPU', not '{v}'"
                    )))
                    .py()
                }
            };
            self.ext_set(py, |e| e.device_type = dt)
        })
    }
    /// Extension metadata: compression size.
    #[getter]
    fn cmps_size(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.cmps_size))
    }
    #[setter]
    fn set_cmps_size(&mut self, py: Python<'_>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.cmps_size = v))
    }
    /// Extension metadata: compression table.
    #[getter]
    fn cmps_tab(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.cmps_tab.clone()))
    }
    #[setter]
    fn set_cmps_tab(&mut self, py: Python<'_>, v: String) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.cmps_tab = v))
    }
    /// Extension metadata: compression table offset.
    #[getter]
    fn cmps_tab_offset(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.ext_get(py, |e| e.cmps_tab_offset))
    }
    #[setter]
    fn set_cmps_tab_offset(&mut self, py: Python<'_>, v: i64) -> PyResult<()> {
        crate::errors::guard_res(|| self.ext_set(py, |e| e.cmps_tab_offset = v))
    }

    /// The descriptor's attributes (a mutable mapping).
    #[getter]
    fn attrs(slf: &Bound<'_, Self>) -> PyResult<PyAttrMap> {
        crate::errors::guard(|| PyAttrMap {
            owner: AttrOwner::Desc(slf.clone().unbind()),
        })
    }

    /// Whether this is a real descriptor (an unset optional input is not).
    #[getter]
    fn is_valid(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.with(py, |d| d.is_valid()))
    }

    /// Whether any dimension is unknown.
    #[getter]
    fn is_unknown_shape(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard_res(|| self.with(py, |d| d.is_unknown_shape()))
    }

    /// GE's `GetShapeSize`: scalar → 0, unknown → -1, else the element count.
    fn shape_size(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| self.with(py, |d| d.shape_size()))
    }

    /// GE's `CalcTensorMemSize`: payload bytes without padding. Raises on unknown dims
    /// (size -1), unsized dtypes, formats GE cannot size, or overflow.
    fn mem_size(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| {
            let size = self.with(py, |d| d.mem_size())?.py()?;
            if size < 0 {
                let what = self.with(py, |d| {
                    format!("{:?} {}", d.shape.as_slice(), d.dtype.name())
                })?;
                return Err(IrError::InvalidArgument(format!(
                    "tensor {what} has no known size (unknown dims or an unsized dtype)"
                )))
                .py();
            }
            Ok(size)
        })
    }

    /// GE's `GetTensorMemorySizeInBytes`: `mem_size()` rounded up to 32 bytes plus 32.
    fn memory_size(&self, py: Python<'_>) -> PyResult<i64> {
        crate::errors::guard_res(|| memory_size_in_bytes(self.mem_size(py)?).py())
    }

    /// A standalone copy (a value, even when this is a view of a node's port).
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            Ok(PyTensorDesc::owned(self.with(py, |d| Arc::new(d.clone()))?))
        })
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        crate::errors::guard_res(|| self.copy(py))
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard_res(|| self.copy(py))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard_res(|| {
            let Ok(other) = other.cast::<PyTensorDesc>() else {
                return Ok(false);
            };
            let b = other.borrow().snapshot(py)?;
            self.with(py, |a| *a == *b)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard_res(|| {
            self.with(py, |d| {
                let fmt = ascendir_ir::format::bits::serial_string(d.format);
                let name = d
                    .name
                    .as_deref()
                    .map(|n| format!(" '{n}'"))
                    .unwrap_or_default();
                format!(
                    "<TensorDesc{name} {:?} {} {fmt}>",
                    d.shape.as_slice(),
                    d.dtype.name()
                )
            })
        })
    }
}

/// Keeps shared tensor bytes alive while numpy arrays view them.
#[pyclass(module = "ascendir", frozen)]
#[derive(Debug)]
pub struct TensorBuffer {
    data: Bytes,
}

#[pymethods]
impl TensorBuffer {
    fn __len__(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.data.len())
    }
}

/// A read-only one-dimensional uint8 numpy array over `data`, without copying.
pub fn bytes_to_numpy<'py>(py: Python<'py>, data: &Bytes) -> PyResult<Bound<'py, PyAny>> {
    let owner = Bound::new(py, TensorBuffer { data: data.clone() })?;
    let bytes = &owner.get().data;
    let view = numpy::ndarray::ArrayView1::from(bytes.as_ref());
    // SAFETY: the array points into `owner.data`, an immutable `Bytes` that lives as long as
    // `owner`, which numpy keeps as the array's base object; the array is made read-only
    // right below so nothing can write through it.
    let array =
        unsafe { numpy::PyArray1::<u8>::borrow_from_array(&view, owner.clone().into_any()) };
    array.getattr("flags")?.setattr("writeable", false)?;
    Ok(array.into_any())
}

/// A constant tensor: a descriptor and an immutable byte payload shared without copies.
#[pyclass(name = "Tensor", module = "ascendir", frozen)]
#[derive(Debug)]
pub struct PyTensor {
    /// The tensor.
    pub inner: Tensor,
}

/// The GE dtype of a numpy array (through `DataType.from_numpy`).
fn numpy_dtype(array: &Bound<'_, PyAny>) -> PyResult<DataType> {
    extract_dtype(&array.getattr("dtype")?)
}

/// Bytes of a numpy array or a bytes-like object: zero-copy for `bytes` and for read-only
/// C-contiguous arrays over an immutable buffer (they cannot change under us), one copy
/// otherwise.
pub fn payload_of(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(PyBytesOwner::share(b));
    }
    let py = obj.py();
    let np = py.import("numpy")?;
    let array = np.call_method1("ascontiguousarray", (obj,))?;
    let flags = array.getattr("flags")?;
    let writeable: bool = flags.getattr("writeable")?.extract()?;
    let raw = array
        .call_method1("view", (np.getattr("uint8")?,))?
        .call_method1("reshape", (-1,))?;
    // Shared only when no one can write the memory: a read-only array whose memory comes
    // from an immutable `bytes` or from one of our tensor buffers (numpy refuses to make such
    // an array writeable again). A read-only array owning its memory is copied: its owner can
    // set `writeable = True` again and change it.
    let mut base = array.getattr("base")?;
    while base.is_instance(&np.getattr("ndarray")?)? {
        base = base.getattr("base")?;
    }
    // Exact types only: a subclass instance can hold attributes that refer back to the graph.
    let immutable =
        base.is_exact_instance_of::<PyBytes>() || base.is_exact_instance_of::<TensorBuffer>();
    if !writeable && immutable {
        let (ptr, _): (usize, bool) = raw
            .getattr("__array_interface__")?
            .get_item("data")?
            .extract()?;
        let len: usize = raw.getattr("nbytes")?.extract()?;
        // Only the immutable owner of the memory is kept, not the array: an array (or a
        // subclass of it) can hold attributes, and a reference from them back to the graph
        // would be a cycle through Rust that Python's collector cannot see.
        return Ok(Bytes::from_owner(ArrayOwner {
            _owner: base.unbind(),
            ptr,
            len,
        }));
    }
    let bytes: Bound<'_, PyBytes> = raw.call_method0("tobytes")?.cast_into()?;
    Ok(PyBytesOwner::share(&bytes))
}

/// A Python `bytes` object as the owner of a `Bytes` buffer (no copy).
pub(crate) struct PyBytesOwner(Py<PyBytes>);

impl PyBytesOwner {
    /// The buffer of `data`: shared when it is exactly `bytes`, copied for a subclass. An
    /// instance of a subclass can hold attributes, and one that refers back to the graph
    /// holding its buffer would be a reference cycle through Rust that Python's collector
    /// cannot see (the graph would never be freed); plain `bytes` refers to nothing.
    pub(crate) fn share(data: &Bound<'_, PyBytes>) -> Bytes {
        if data.is_exact_instance_of::<PyBytes>() {
            Bytes::from_owner(PyBytesOwner(data.clone().unbind()))
        } else {
            Bytes::copy_from_slice(data.as_bytes())
        }
    }
}

impl AsRef<[u8]> for PyBytesOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: a `bytes` object is immutable and kept alive by the `Py` we own, so its
        // buffer is valid and unchanging for our whole lifetime; reading the pointer and
        // length does not need the GIL.
        unsafe {
            let ptr = ffi::PyBytes_AsString(self.0.as_ptr()) as *const u8;
            let len = ffi::PyBytes_Size(self.0.as_ptr()) as usize;
            std::slice::from_raw_parts(ptr, len)
        }
    }
}

/// The immutable owner (`bytes` or tensor buffer) of the memory of a read-only numpy array,
/// kept alive while tensor bytes point into it.
struct ArrayOwner {
    _owner: Py<PyAny>,
    ptr: usize,
    len: usize,
}

impl AsRef<[u8]> for ArrayOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr`/`len` describe C-contiguous data inside the memory of `_owner`, an
        // immutable `bytes` or tensor buffer that we keep alive (the array was a view of it and
        // numpy will not make it writeable), so no Python code can change or free it while we
        // hold the reference.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl PyTensor {
    /// Build from a numpy array (or anything `numpy.asarray` accepts).
    pub fn from_array(obj: &Bound<'_, PyAny>, dtype: Option<DataType>) -> PyResult<Tensor> {
        let py = obj.py();
        let np = py.import("numpy")?;
        let array = np.call_method1("asarray", (obj,))?;
        let dt = match dtype {
            Some(d) => d,
            None => numpy_dtype(&array)?,
        };
        let shape: Vec<i64> = array.getattr("shape")?.extract()?;
        let data = payload_of(&array)?;
        Ok(Tensor::new(TensorDesc::new(&shape, dt, Format::ND), data))
    }
}

#[pymethods]
impl PyTensor {
    #[new]
    #[pyo3(signature = (desc_or_array, data=None))]
    fn py_new(desc_or_array: &Bound<'_, PyAny>, data: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        crate::errors::guard_res(|| {
            if let Ok(td) = desc_or_array.cast::<PyTensorDesc>() {
                let desc = td.borrow().snapshot(desc_or_array.py())?;
                let payload = match data {
                    Some(d) => payload_of(d)?,
                    None => Bytes::new(),
                };
                let expected = desc.mem_size().unwrap_or(-1);
                if expected >= 0 && data.is_some() && expected as usize != payload.len() {
                    return Err(IrError::InvalidArgument(format!(
                        "tensor data has {} bytes but the descriptor {:?} {} needs {expected}",
                        payload.len(),
                        desc.shape.as_slice(),
                        desc.dtype.name()
                    )))
                    .py();
                }
                return Ok(PyTensor {
                    inner: Tensor {
                        desc,
                        data: payload,
                    },
                });
            }
            if data.is_some() {
                return Err(IrError::InvalidArgument(
                    "Tensor(array) takes no data argument; use Tensor(desc, data)".to_string(),
                ))
                .py();
            }
            Ok(PyTensor {
                inner: PyTensor::from_array(desc_or_array, None)?,
            })
        })
    }

    /// The tensor's descriptor (a copy).
    #[getter]
    fn desc(&self) -> PyResult<PyTensorDesc> {
        crate::errors::guard(|| PyTensorDesc::owned(self.inner.desc.clone()))
    }

    /// The payload as a read-only `memoryview` (no copy).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| {
            let array = bytes_to_numpy(py, &self.inner.data)?;
            py.import("builtins")?
                .getattr("memoryview")?
                .call1((array,))
        })
    }

    /// Payload size in bytes.
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        crate::errors::guard(|| self.inner.data.len())
    }

    /// A zero-copy, read-only numpy view of the payload with the descriptor's shape.
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| {
            let dtype = py_dtype(py, self.inner.desc.dtype)?
                .bind(py)
                .call_method0("to_numpy")?;
            let flat = bytes_to_numpy(py, &self.inner.data)?.call_method1("view", (dtype,))?;
            let dims: Vec<i64> = self.inner.desc.shape.to_vec();
            if dims.iter().any(|&d| d < 0) {
                return Err(IrError::InvalidArgument(format!(
                    "cannot view a tensor of unknown shape {dims:?} as an array"
                )))
                .py();
            }
            flat.call_method1("reshape", (PyTuple::new(py, dims)?,))
        })
    }

    /// The values as nested lists of Python numbers (a number for shape `[]`), as numpy's
    /// `tolist` gives them; made straight from the payload for bool, integer and float types.
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| match super::tensor_list::tolist(py, &self.inner)? {
            Some(list) => Ok(list),
            None => self.numpy(py)?.call_method0("tolist"),
        })
    }

    /// The numpy array protocol (numpy 2): the zero-copy read-only view of `numpy()` when
    /// neither a different `dtype` nor `copy=True` asks for a copy; `copy=False` with a
    /// `dtype` that needs a conversion raises `InvalidArgumentError` (a `ValueError`).
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard_res(|| {
            let mut array = self.numpy(py)?;
            let mut copied = false;
            if let Some(d) = dtype.filter(|d| !d.is_none()) {
                let want = py.import("numpy")?.getattr("dtype")?.call1((d,))?;
                if !array.getattr("dtype")?.eq(&want)? {
                    if copy == Some(false) {
                        return Err(IrError::InvalidArgument(format!(
                            "a {} tensor cannot be viewed as {} without a copy (copy=False)",
                            self.inner.desc.dtype.name(),
                            want.str()?
                        )))
                        .py();
                    }
                    array = array.call_method1("astype", (want,))?;
                    copied = true;
                }
            }
            if copy == Some(true) && !copied {
                array = array.call_method0("copy")?;
            }
            Ok(array)
        })
    }

    fn __repr__(&self) -> PyResult<String> {
        crate::errors::guard(|| {
            format!(
                "<Tensor {:?} {} {} bytes>",
                self.inner.desc.shape.as_slice(),
                self.inner.desc.dtype.name(),
                self.inner.data.len()
            )
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            other
                .cast::<PyTensor>()
                .is_ok_and(|o| o.get().inner == self.inner)
        })
    }
}
