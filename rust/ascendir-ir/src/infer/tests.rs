//! Unit tests of every rule family; the graph engine's in [`engine`].

use std::sync::Arc;

use bytes::Bytes;

use super::*;
use crate::attr::AttrValue;
use crate::dtype::DataType;
use crate::format::Format;
use crate::op_desc::OpDesc;
use crate::tensor::{Tensor, TensorDesc};

mod engine;

fn td(shape: &[i64], dt: DataType) -> Arc<TensorDesc> {
    Arc::new(TensorDesc::new(shape, dt, Format::ND))
}

fn f32d(shape: &[i64]) -> Arc<TensorDesc> {
    td(shape, DataType::FLOAT)
}

fn i32_tensor(v: &[i32]) -> Tensor {
    let mut data = Vec::new();
    for x in v {
        data.extend_from_slice(&x.to_le_bytes());
    }
    Tensor::new(
        TensorDesc::new(&[v.len() as i64], DataType::INT32, Format::ND),
        Bytes::from(data),
    )
}

struct Case {
    op: OpDesc,
    values: Vec<Option<Tensor>>,
    params: Params,
}

impl Case {
    fn new(ty: &str) -> Self {
        Case {
            op: OpDesc::new("n", ty),
            values: Vec::new(),
            params: Params::new(),
        }
    }
    fn input(mut self, name: &str, d: Arc<TensorDesc>) -> Self {
        self.op.add_input(name, d);
        self.values.push(None);
        self
    }
    fn value(mut self, name: &str, t: Tensor) -> Self {
        self.op.add_input(name, t.desc.clone());
        self.values.push(Some(t));
        self
    }
    fn outputs(mut self, n: usize) -> Self {
        for i in 0..n {
            self.op
                .add_output(&format!("y{i}"), Arc::new(TensorDesc::default()))
                .unwrap();
        }
        self
    }
    fn attr(mut self, k: &str, v: AttrValue) -> Self {
        self.op.set_attr(k, v);
        self
    }
    fn ints(self, k: &str, v: &[i64]) -> Self {
        self.attr(k, AttrValue::ListInt(v.to_vec()))
    }
    fn param(mut self, k: &str, v: &str) -> Self {
        self.params.insert(k.into(), Param::Str(v.into()));
        self
    }
    fn run(&self, kind: RuleKind) -> RuleResult {
        if self.op.num_outputs() == 0 {
            let mut c = Case {
                op: self.op.clone(),
                values: self.values.clone(),
                params: self.params.clone(),
            };
            c = c.outputs(1);
            return c.run(kind);
        }
        let values = |i: usize| self.values.get(i).cloned().flatten();
        let ctx = InferCtx {
            op: &self.op,
            params: &self.params,
            values: &values,
        };
        run_rule(&InferRule::new(kind, self.params.clone()), &ctx)
    }
    fn shape(&self, kind: RuleKind) -> Vec<i64> {
        self.run(kind).unwrap()[0].shape.to_vec()
    }
}

#[test]
fn same_as_and_broadcast() {
    let c = Case::new("Relu").input("x", f32d(&[2, -1]));
    assert_eq!(c.shape(RuleKind::SameAs), vec![2, -1]);
    let c = Case::new("Add")
        .input("x1", f32d(&[4, 1, 3]))
        .input("x2", f32d(&[5, 1]));
    assert_eq!(c.shape(RuleKind::Broadcast), vec![4, 5, 3]);
    let c = Case::new("Add")
        .input("x1", f32d(&[-2]))
        .input("x2", f32d(&[5, 1]));
    assert_eq!(c.shape(RuleKind::Broadcast), vec![-2]);
    let c = Case::new("Add")
        .input("x1", f32d(&[3]))
        .input("x2", f32d(&[4]));
    let e = c.run(RuleKind::Broadcast).unwrap_err();
    assert!(e.contains("cannot be broadcast"), "{e}");
    let c = Case::new("Less")
        .input("x1", f32d(&[3]))
        .input("x2", f32d(&[]))
        .param("dtype", "BOOL");
    assert_eq!(c.run(RuleKind::Broadcast).unwrap()[0].dtype, DataType::BOOL);
    let c = Case::new("AddN")
        .input("x0", f32d(&[1, 3]))
        .input("x1", f32d(&[2, 1]))
        .input("x2", f32d(&[2, 3]));
    assert_eq!(
        c.param("inputs", "x").shape(RuleKind::Broadcast),
        vec![2, 3]
    );
}

#[test]
fn cast_and_select() {
    let c = Case::new("Cast").input("x", f32d(&[2])).attr(
        "dst_type",
        AttrValue::Int(DataType::INT32.ge_value().into()),
    );
    let o = c.run(RuleKind::Cast).unwrap();
    assert_eq!(o[0].dtype, DataType::INT32);
    let c = Case::new("Cast").input("x", f32d(&[2]));
    assert!(c.run(RuleKind::Cast).is_err());
    let c = Case::new("SelectV2")
        .input("condition", td(&[2, 1], DataType::BOOL))
        .input("x1", f32d(&[3]))
        .input("x2", f32d(&[1]));
    let mut c = c;
    c.params.insert("broadcast_condition".into(), Param::Int(1));
    let o = c.run(RuleKind::Select).unwrap();
    assert_eq!(o[0].shape.to_vec(), vec![2, 3]);
    assert_eq!(o[0].dtype, DataType::FLOAT);
}

#[test]
fn reductions() {
    let base = || Case::new("ReduceSum").input("x", f32d(&[2, 3, 4]));
    assert_eq!(
        base().ints("axes", &[-1]).shape(RuleKind::Reduce),
        vec![2, 3]
    );
    assert_eq!(
        base()
            .ints("axes", &[0, 2])
            .attr("keep_dims", AttrValue::Bool(true))
            .shape(RuleKind::Reduce),
        vec![1, 3, 1]
    );
    assert_eq!(
        base().ints("axes", &[]).shape(RuleKind::Reduce),
        Vec::<i64>::new()
    );
    assert!(base().ints("axes", &[3]).run(RuleKind::Reduce).is_err());
    assert!(base().ints("axes", &[1, -2]).run(RuleKind::Reduce).is_err());
    let c = Case::new("ReduceSum")
        .input("x", f32d(&[2, 3, 4]))
        .value("axes", i32_tensor(&[1]));
    assert_eq!(c.shape(RuleKind::Reduce), vec![2, 4]);
    // Non-constant axes of known length.
    let c = Case::new("ReduceSum")
        .input("x", f32d(&[2, 3, 4]))
        .input("axes", td(&[2], DataType::INT32));
    assert_eq!(c.shape(RuleKind::Reduce), vec![-1]);
    let c = Case::new("ReduceSum")
        .input("x", f32d(&[-2]))
        .ints("axes", &[0]);
    assert_eq!(c.shape(RuleKind::Reduce), vec![-2]);
    let c = Case::new("ArgMaxV2")
        .input("x", f32d(&[2, 5]))
        .value("dimension", i32_tensor(&[-1]));
    let o = c.run(RuleKind::ArgMax).unwrap();
    assert_eq!(
        (o[0].shape.to_vec(), o[0].dtype),
        (vec![2], DataType::INT32)
    );
    let c = Case::new("TopKV2")
        .input("x", f32d(&[3, 10]))
        .value("k", i32_tensor(&[4]))
        .outputs(2);
    let o = c.run(RuleKind::TopK).unwrap();
    assert_eq!(o[0].shape.to_vec(), vec![3, 4]);
    assert_eq!(o[1].dtype, DataType::INT32);
    let c = Case::new("TopKV2")
        .input("x", f32d(&[3, 2]))
        .value("k", i32_tensor(&[4]));
    assert!(c.run(RuleKind::TopK).is_err());
    let c = Case::new("LayerNorm")
        .input("x", f32d(&[2, 3, 4]))
        .attr("begin_norm_axis", AttrValue::Int(-1))
        .outputs(3);
    let o = c.run(RuleKind::LayerNorm).unwrap();
    assert_eq!(o[1].shape.to_vec(), vec![2, 3, 1]);
}

#[test]
fn flash_attention_layouts() {
    let bsh = |layout: &str, q: &[i64], v: &[i64]| {
        Case::new("FlashAttentionScore")
            .input("query", f32d(q))
            .input("key", f32d(v))
            .input("value", f32d(v))
            .attr("input_layout", AttrValue::String(layout.into()))
            .attr("head_num", AttrValue::Int(4))
            .outputs(4)
            .run(RuleKind::FlashAttention)
    };
    let o = bsh("BNSD", &[2, 4, 7, 16], &[2, 4, 9, 16]).unwrap();
    assert_eq!(o[0].shape.to_vec(), vec![2, 4, 7, 8]);
    assert_eq!(o[1].dtype, DataType::FLOAT);
    assert_eq!(o[2].shape.to_vec(), vec![0]);
    assert_eq!(o[3].shape.to_vec(), vec![2, 4, 7, 16]);
    let o = bsh("BSND", &[2, 7, 4, 16], &[2, 9, 4, 16]).unwrap();
    assert_eq!(o[0].shape.to_vec(), vec![2, 4, 7, 8]);
    assert_eq!(o[3].shape.to_vec(), vec![2, 7, 4, 16]);
    let o = bsh("BSH", &[2, 7, 64], &[2, 9, 64]).unwrap();
    assert_eq!(o[0].shape.to_vec(), vec![2, 4, 7, 8]);
    let o = bsh("SBH", &[7, 2, 64], &[9, 2, 64]).unwrap();
    assert_eq!(o[1].shape.to_vec(), vec![2, 4, 7, 8]);
    assert_eq!(o[3].shape.to_vec(), vec![7, 2, 64]);
    assert!(bsh("BNSD", &[2, 7, 64], &[2, 9, 64]).is_err());
    assert!(bsh("TND", &[2, 7, 64], &[2, 9, 64]).is_err());
}

#[test]
fn matmuls() {
    let c = Case::new("MatMul")
        .input("x1", f32d(&[2, 3]))
        .input("x2", f32d(&[3, 5]));
    assert_eq!(c.shape(RuleKind::MatMul), vec![2, 5]);
    let c = Case::new("MatMul")
        .input("x1", f32d(&[3, 2]))
        .input("x2", f32d(&[5, 3]))
        .attr("transpose_x1", AttrValue::Bool(true))
        .attr("transpose_x2", AttrValue::Bool(true));
    assert_eq!(c.shape(RuleKind::MatMul), vec![2, 5]);
    let c = Case::new("MatMul")
        .input("x1", f32d(&[2, 3]))
        .input("x2", f32d(&[4, 5]));
    assert!(c.run(RuleKind::MatMul).unwrap_err().contains("inner"));
    let c = Case::new("MatMul")
        .input("x1", f32d(&[2, -1]))
        .input("x2", f32d(&[4, 5]));
    assert_eq!(c.shape(RuleKind::MatMul), vec![2, 5]);
    let c = Case::new("BatchMatMul")
        .input("x1", f32d(&[8, 1, 2, 3]))
        .input("x2", f32d(&[4, 5, 3]))
        .attr("adj_x2", AttrValue::Bool(true))
        .param("transpose_b", "adj_x2");
    assert_eq!(c.shape(RuleKind::BatchMatMul), vec![8, 4, 2, 5]);
    let c = Case::new("BatchMatMulV2")
        .input("x1", f32d(&[3]))
        .input("x2", f32d(&[2, 3, 4]));
    assert_eq!(c.shape(RuleKind::BatchMatMul), vec![2, 4]);
    let c = Case::new("FullyConnection")
        .input(
            "x",
            Arc::new(TensorDesc::new(
                &[1, 2048, 1, 1],
                DataType::FLOAT,
                Format::NCHW,
            )),
        )
        .input("w", f32d(&[1000, 2048, 1, 1]))
        .attr("num_output", AttrValue::Int(1000));
    assert_eq!(c.shape(RuleKind::FullyConnection), vec![1, 1000, 1, 1]);
    let c = Case::new("FullyConnection")
        .input("x", f32d(&[4, 16]))
        .input("w", f32d(&[8, 16]))
        .attr("num_output", AttrValue::Int(8));
    assert_eq!(c.shape(RuleKind::FullyConnection), vec![4, 8]);
}

fn nchw(shape: &[i64]) -> Arc<TensorDesc> {
    Arc::new(TensorDesc::new(shape, DataType::FLOAT, Format::NCHW))
}

#[test]
fn convolutions() {
    let c = Case::new("Conv2D")
        .input("x", nchw(&[1, 3, 224, 224]))
        .input("filter", nchw(&[64, 3, 7, 7]))
        .ints("strides", &[1, 1, 2, 2])
        .ints("pads", &[3, 3, 3, 3])
        .ints("dilations", &[1, 1, 1, 1]);
    assert_eq!(c.shape(RuleKind::Conv), vec![1, 64, 112, 112]);
    let nhwc = Arc::new(TensorDesc::new(
        &[1, 10, 10, 8],
        DataType::FLOAT16,
        Format::NHWC,
    ));
    let hwcn = Arc::new(TensorDesc::new(
        &[3, 3, 8, 16],
        DataType::FLOAT16,
        Format::HWCN,
    ));
    let c = Case::new("Conv2D")
        .input("x", nhwc.clone())
        .input("filter", hwcn.clone())
        .ints("strides", &[1, 2, 2, 1])
        .ints("pads", &[0, 0, 0, 0])
        .attr("padding", AttrValue::String("SAME".into()));
    assert_eq!(c.shape(RuleKind::Conv), vec![1, 5, 5, 16]);
    let c = Case::new("Conv2D")
        .input("x", nchw(&[1, 4, 8, 8]))
        .input("filter", nchw(&[4, 2, 3, 3]))
        .attr("groups", AttrValue::Int(2))
        .ints("dilations", &[1, 1, 2, 2]);
    assert_eq!(c.shape(RuleKind::Conv), vec![1, 4, 4, 4]);
    let c = Case::new("Conv2D")
        .input("x", nchw(&[1, 5, 8, 8]))
        .input("filter", nchw(&[4, 2, 3, 3]));
    assert!(c.run(RuleKind::Conv).unwrap_err().contains("channels"));
    let c = Case::new("Conv2D")
        .input("x", nchw(&[-1, 3, -1, 32]))
        .input("filter", nchw(&[8, 3, 3, 3]));
    assert_eq!(c.shape(RuleKind::Conv), vec![-1, 8, -1, 30]);
    let c = Case::new("Conv2D")
        .input(
            "x",
            Arc::new(TensorDesc::new(&[1, 3, 8, 8], DataType::INT8, Format::NCHW)),
        )
        .input(
            "filter",
            Arc::new(TensorDesc::new(&[2, 3, 1, 1], DataType::INT8, Format::NCHW)),
        );
    assert_eq!(c.run(RuleKind::Conv).unwrap()[0].dtype, DataType::INT32);
    let c = Case::new("MaxPool")
        .input("x", nchw(&[1, 64, 112, 112]))
        .ints("ksize", &[1, 1, 3, 3])
        .ints("strides", &[1, 1, 2, 2])
        .attr("padding", AttrValue::String("SAME".into()));
    assert_eq!(c.shape(RuleKind::Pool), vec![1, 64, 56, 56]);
    let c = Case::new("AvgPool")
        .input("x", nchw(&[1, 64, 7, 7]))
        .ints("ksize", &[1, 1, 7, 7])
        .ints("strides", &[1, 1, 1, 1])
        .attr("padding", AttrValue::String("VALID".into()));
    assert_eq!(c.shape(RuleKind::Pool), vec![1, 64, 1, 1]);
    let c = Case::new("Pooling")
        .input("x", nchw(&[1, 64, 112, 112]))
        .ints("window", &[3, 3])
        .ints("stride", &[2, 2])
        .ints("pad", &[0, 0, 0, 0])
        .attr("ceil_mode", AttrValue::Int(0));
    assert_eq!(c.shape(RuleKind::CaffePool), vec![1, 64, 56, 56]);
    let c = Case::new("Pooling")
        .input("x", nchw(&[1, 2048, 7, 7]))
        .attr("global_pooling", AttrValue::Bool(true));
    assert_eq!(c.shape(RuleKind::CaffePool), vec![1, 2048, 1, 1]);
    let c = Case::new("Conv2DBackpropInput")
        .value("input_size", i32_tensor(&[1, 3, 8, 8]))
        .input("filter", nchw(&[4, 3, 3, 3]))
        .input("out_backprop", nchw(&[1, 4, 6, 6]));
    assert_eq!(c.shape(RuleKind::ConvBackpropInput), vec![1, 3, 8, 8]);
}

#[test]
fn reshapes() {
    let c = Case::new("Reshape")
        .input("x", f32d(&[2, 3, 4]))
        .value("shape", i32_tensor(&[0, -1]));
    assert_eq!(c.shape(RuleKind::Reshape), vec![2, 12]);
    let c = Case::new("Reshape")
        .input("x", f32d(&[2, 3, 4]))
        .value("shape", i32_tensor(&[5, -1]));
    assert!(c.run(RuleKind::Reshape).is_err());
    let c = Case::new("Reshape")
        .input("x", f32d(&[2, 3, 4]))
        .value("shape", i32_tensor(&[-1, -1]));
    assert!(c.run(RuleKind::Reshape).is_err());
    let c = Case::new("Reshape")
        .input("x", f32d(&[-1, 3, 4]))
        .value("shape", i32_tensor(&[-1, 12]));
    assert_eq!(c.shape(RuleKind::Reshape), vec![-1, 12]);
    let c = Case::new("Reshape")
        .input("x", f32d(&[2, 3]))
        .input("shape", td(&[3], DataType::INT32));
    assert_eq!(c.shape(RuleKind::Reshape), vec![-1, -1, -1]);
    let c = Case::new("Reshape")
        .input("x", f32d(&[2, 3, 4]))
        .value("shape", i32_tensor(&[12]))
        .attr("axis", AttrValue::Int(1));
    assert_eq!(c.shape(RuleKind::Reshape), vec![2, 12]);
    let c = Case::new("Transpose")
        .input("x", f32d(&[2, 3, 4]))
        .value("perm", i32_tensor(&[2, 0, 1]));
    assert_eq!(c.shape(RuleKind::Transpose), vec![4, 2, 3]);
    let c = Case::new("TransposeD")
        .input("x", f32d(&[2, 3]))
        .ints("perm", &[0, 0]);
    assert!(c.run(RuleKind::Transpose).is_err());
    let c = Case::new("Squeeze")
        .input("x", f32d(&[1, 3, 1, 4]))
        .ints("axis", &[]);
    assert_eq!(c.shape(RuleKind::Squeeze), vec![3, 4]);
    let c = Case::new("Squeeze")
        .input("x", f32d(&[1, 3, 1, 4]))
        .ints("axis", &[-2]);
    assert_eq!(c.shape(RuleKind::Squeeze), vec![1, 3, 4]);
    let c = Case::new("Squeeze")
        .input("x", f32d(&[1, 3]))
        .ints("axis", &[1]);
    assert!(c.run(RuleKind::Squeeze).is_err());
    let c = Case::new("Unsqueeze")
        .input("x", f32d(&[3, 4]))
        .ints("axes", &[0, -1]);
    assert_eq!(c.shape(RuleKind::Unsqueeze), vec![1, 3, 4, 1]);
    let c = Case::new("ExpandDims")
        .input("x", f32d(&[3, 4]))
        .value("axis", i32_tensor(&[-1]));
    assert_eq!(c.shape(RuleKind::ExpandDims), vec![3, 4, 1]);
    let c = Case::new("Flatten").input("x", f32d(&[2, 3, 4]));
    assert_eq!(c.shape(RuleKind::Flatten), vec![2, 12]);
}

#[test]
fn assembling_and_indexing() {
    let c = Case::new("ConcatV2")
        .input("x0", f32d(&[2, 3]))
        .input("x1", f32d(&[2, 5]))
        .value("concat_dim", i32_tensor(&[-1]));
    assert_eq!(c.param("inputs", "x").shape(RuleKind::Concat), vec![2, 8]);
    let c = Case::new("ConcatV2D")
        .input("x0", f32d(&[2, 3]))
        .input("x1", f32d(&[3, 5]))
        .attr("concat_dim", AttrValue::Int(1));
    assert!(c.run(RuleKind::Concat).is_err());
    let c = Case::new("ConcatV2D")
        .input("x0", f32d(&[2, -1]))
        .input("x1", f32d(&[-1, 5]))
        .attr("concat_dim", AttrValue::Int(1));
    assert_eq!(c.shape(RuleKind::Concat), vec![2, -1]);
    let c = Case::new("SplitD")
        .input("x", f32d(&[6, 4]))
        .attr("split_dim", AttrValue::Int(0))
        .outputs(3);
    let o = c.run(RuleKind::Split).unwrap();
    assert_eq!(o.len(), 3);
    assert_eq!(o[2].shape.to_vec(), vec![2, 4]);
    let c = Case::new("SplitD")
        .input("x", f32d(&[7, 4]))
        .attr("split_dim", AttrValue::Int(0))
        .outputs(3);
    assert!(c.run(RuleKind::Split).is_err());
    // A scalar has no axis to split: an error, not a panic (axis 0 normalizes to 0 on rank 0).
    for dim in [0, -1, 1] {
        let c = Case::new("SplitD")
            .input("x", f32d(&[]))
            .attr("split_dim", AttrValue::Int(dim))
            .outputs(2);
        assert!(c.run(RuleKind::Split).is_err());
    }
    let c = Case::new("SplitV")
        .input("x", f32d(&[6, 4]))
        .value("size_splits", i32_tensor(&[1, -1]))
        .value("split_dim", i32_tensor(&[0]))
        .outputs(2);
    let o = c.run(RuleKind::Split).unwrap();
    assert_eq!(o[1].shape.to_vec(), vec![5, 4]);
    let c = Case::new("GatherV2")
        .input("x", f32d(&[5, 6, 7]))
        .input("indices", td(&[2, 3], DataType::INT32))
        .value("axis", i32_tensor(&[1]));
    assert_eq!(c.shape(RuleKind::Gather), vec![5, 2, 3, 7]);
    let c = Case::new("Slice")
        .input("x", f32d(&[5, 6]))
        .value("offsets", i32_tensor(&[1, 2]))
        .value("size", i32_tensor(&[2, -1]));
    assert_eq!(c.shape(RuleKind::Slice), vec![2, 4]);
    let c = Case::new("Slice")
        .input("x", f32d(&[5, 6]))
        .value("offsets", i32_tensor(&[4, 0]))
        .value("size", i32_tensor(&[2, 1]));
    assert!(c.run(RuleKind::Slice).is_err());
    let c = Case::new("StridedSlice")
        .input("x", f32d(&[8, 9, 10]))
        .value("begin", i32_tensor(&[1, 0, -3]))
        .value("end", i32_tensor(&[7, 0, 10]))
        .value("strides", i32_tensor(&[2, 1, 1]))
        .attr("end_mask", AttrValue::Int(2))
        .attr("shrink_axis_mask", AttrValue::Int(0));
    assert_eq!(c.shape(RuleKind::StridedSlice), vec![3, 9, 3]);
    let c = Case::new("StridedSlice")
        .input("x", f32d(&[8, 9, 10]))
        .value("begin", i32_tensor(&[0, 2]))
        .value("end", i32_tensor(&[0, 3]))
        .value("strides", i32_tensor(&[1, 1]))
        .attr("ellipsis_mask", AttrValue::Int(1))
        .attr("shrink_axis_mask", AttrValue::Int(2));
    assert_eq!(c.shape(RuleKind::StridedSlice), vec![8, 9]);
    let c = Case::new("StridedSlice")
        .input("x", f32d(&[4]))
        .value("begin", i32_tensor(&[-1]))
        .value("end", i32_tensor(&[0]))
        .value("strides", i32_tensor(&[-1]))
        .attr("end_mask", AttrValue::Int(1));
    assert_eq!(c.shape(RuleKind::StridedSlice), vec![4]);
    let c = Case::new("Tile")
        .input("x", f32d(&[2, 3]))
        .value("multiples", i32_tensor(&[2, 1, 2]));
    assert_eq!(c.shape(RuleKind::Tile), vec![2, 2, 6]);
    let c = Case::new("Expand")
        .input("x", f32d(&[3, 1]))
        .value("shape", i32_tensor(&[2, 3, 4]));
    assert_eq!(c.shape(RuleKind::Expand), vec![2, 3, 4]);
    let c = Case::new("Pad")
        .input("x", f32d(&[2, 3]))
        .value("paddings", i32_tensor(&[1, 1, 0, 2]));
    assert_eq!(c.shape(RuleKind::Pad), vec![4, 5]);
    let c = Case::new("PadD").input("x", f32d(&[2, 3])).attr(
        "paddings",
        AttrValue::ListListInt(vec![vec![1, 1], vec![0, 2]]),
    );
    assert_eq!(c.shape(RuleKind::Pad), vec![4, 5]);
    // PadV3: [b0, e0, b1, e1] by default, [b0, b1, e0, e1] when not contiguous (F.pad(x,
    // [0, 0, 0, 1]) on [2, 15, 16] pads dim 1 at its end).
    let pads = [0, 0, 0, 0, 1, 0];
    let c = Case::new("PadV3")
        .input("x", f32d(&[2, 15, 16]))
        .value("paddings", i32_tensor(&pads));
    assert_eq!(c.shape(RuleKind::Pad), vec![2, 15, 17]);
    let c = c.attr("paddings_contiguous", AttrValue::Bool(false));
    assert_eq!(c.shape(RuleKind::Pad), vec![2, 16, 16]);
    let c = Case::new("PadV3")
        .input("x", f32d(&[2, 3]))
        .value("paddings", i32_tensor(&[0, -2, 0, -2]))
        .attr("paddings_contiguous", AttrValue::Bool(false));
    assert!(c.run(RuleKind::Pad).unwrap_err().contains("negative"));
}

#[test]
fn generators() {
    let c = Case::new("Shape").input("x", f32d(&[2, 3, 4]));
    let o = c.run(RuleKind::ShapeOf).unwrap();
    assert_eq!(
        (o[0].shape.to_vec(), o[0].dtype),
        (vec![3], DataType::INT32)
    );
    let c = Case::new("Shape").input("x", f32d(&[-2]));
    assert_eq!(c.shape(RuleKind::ShapeOf), vec![-1]);
    let c = Case::new("Size").input("x", f32d(&[2, 3])).attr(
        "dtype",
        AttrValue::Int(i64::from(DataType::INT64.ge_value())),
    );
    let o = c.run(RuleKind::Size).unwrap();
    assert_eq!((o[0].shape.len(), o[0].dtype), (0, DataType::INT64));
    let c = Case::new("Fill")
        .value("dims", i32_tensor(&[2, 5]))
        .input("value", td(&[], DataType::FLOAT16));
    let o = c.run(RuleKind::Fill).unwrap();
    assert_eq!(
        (o[0].shape.to_vec(), o[0].dtype),
        (vec![2, 5], DataType::FLOAT16)
    );
    let c = Case::new("Range")
        .value("start", i32_tensor(&[1]))
        .value("limit", i32_tensor(&[10]))
        .value("delta", i32_tensor(&[3]));
    assert_eq!(c.shape(RuleKind::Range), vec![3]);
    let c = Case::new("Range")
        .input("start", td(&[], DataType::INT32))
        .input("limit", td(&[], DataType::INT32))
        .input("delta", td(&[], DataType::INT32));
    assert_eq!(c.shape(RuleKind::Range), vec![-1]);
    let mut d = TensorDesc::new(&[1, 63, 1, 1, 16], DataType::FLOAT16, Format::NC1HWC0);
    d.origin_format = Format::NCHW.value();
    d.origin_shape = Some(Box::new(Shape::from_slice(&[1, 1000, 1, 1])));
    let c = Case::new("TransData")
        .input("src", Arc::new(d))
        .attr("dst_format", AttrValue::String("NCHW".into()));
    assert_eq!(c.shape(RuleKind::TransData), vec![1, 1000, 1, 1]);
    let c = Case::new("TransData")
        .input("src", nchw(&[1, 20, 4, 4]))
        .attr("dst_format", AttrValue::String("NC1HWC0".into()));
    // The rule gives the logical shape and the layout; the writer stores the physical shape.
    let out = &c.run(RuleKind::TransData).unwrap()[0];
    assert_eq!(out.shape.to_vec(), vec![1, 20, 4, 4]);
    assert_eq!(out.layout, Some((Format::NC1HWC0, Format::NCHW)));
}

#[test]
fn physical_shapes_of_the_device_formats() {
    use super::format::physical_shape;
    let phys = |l: &[i64], o: Format, f: Format, dt| {
        physical_shape(l, o.value(), f.value(), dt).map(|s| s.to_vec())
    };
    let f16 = DataType::FLOAT16;
    // GE's FRACTAL_Z of a [64, 64, 3, 3] fp16 weight: (C1·H·W, N/16, 16, C0).
    let fz = phys(&[64, 64, 3, 3], Format::NCHW, Format::FRACTAL_Z, f16);
    assert_eq!(fz, Some(vec![36, 4, 16, 16]));
    let fz = phys(&[3, 3, 64, 64], Format::HWCN, Format::FRACTAL_Z, f16);
    assert_eq!(fz, Some(vec![36, 4, 16, 16]));
    let fz = phys(
        &[20, 3, 3, 3],
        Format::NCHW,
        Format::FRACTAL_Z,
        DataType::INT8,
    );
    assert_eq!(fz, Some(vec![9, 2, 16, 32]));
    // FRACTAL_Z_C04: C padded to 4, (ceil(4·H·W / C0), ceil(N / C0), 16, C0).
    let c04 = phys(&[64, 3, 7, 7], Format::NCHW, Format::FRACTAL_Z_C04, f16);
    assert_eq!(c04, Some(vec![13, 4, 16, 16]));
    assert_eq!(
        phys(&[64, 8, 7, 7], Format::NCHW, Format::FRACTAL_Z_C04, f16),
        None
    );
    let nc = phys(&[2, 20, 4, 4], Format::NHWC, Format::NC1HWC0, f16);
    assert_eq!(nc, Some(vec![2, 1, 20, 4, 16]));
    let dynamic = phys(&[-1, 20, 4, 4], Format::NCHW, Format::FRACTAL_Z, f16);
    assert_eq!(dynamic, Some(vec![32, -1, 16, 16]));
}

#[test]
fn transformed_descs_use_origin_shapes() {
    let mut x = TensorDesc::new(&[1, 1, 224, 224, 16], DataType::FLOAT16, Format::NC1HWC0);
    x.origin_format = Format::NCHW.value();
    x.origin_shape = Some(Box::new(Shape::from_slice(&[1, 3, 224, 224])));
    let mut w = TensorDesc::new(&[13, 4, 16, 16], DataType::FLOAT16, Format::FRACTAL_Z);
    w.origin_format = Format::NCHW.value();
    w.origin_shape = Some(Box::new(Shape::from_slice(&[64, 3, 7, 7])));
    let c = Case::new("Conv2D")
        .input("x", Arc::new(x))
        .input("filter", Arc::new(w))
        .ints("strides", &[1, 1, 2, 2])
        .ints("pads", &[3, 3, 3, 3]);
    assert_eq!(c.shape(RuleKind::Conv), vec![1, 64, 112, 112]);
}

#[test]
fn onnx_style_slices_and_global_pools() {
    let c = Case::new("StridedSliceV2")
        .input("x", f32d(&[8, 10, 12]))
        .value("begin", i32_tensor(&[1, -4]))
        .value("end", i32_tensor(&[i32::MAX, 100]))
        .value("axes", i32_tensor(&[0, 2]))
        .value("strides", i32_tensor(&[2, 1]));
    assert_eq!(c.shape(RuleKind::SliceAxes), vec![4, 10, 4]);
    let c = Case::new("StridedSliceV2")
        .input("x", f32d(&[8, 10]))
        .value("begin", i32_tensor(&[0]))
        .input("end", td(&[1], DataType::INT32))
        .value("axes", i32_tensor(&[-1]));
    assert_eq!(c.shape(RuleKind::SliceAxes), vec![-1, -1]);
    let c = Case::new("StridedSliceV2")
        .input("x", f32d(&[8, 10]))
        .value("begin", i32_tensor(&[9]))
        .value("end", i32_tensor(&[0]))
        .value("strides", i32_tensor(&[-3]));
    assert_eq!(c.shape(RuleKind::SliceAxes), vec![3, 10]);
    let c = Case::new("GlobalAveragePool").input("x", f32d(&[-1, 128, 7, 7]));
    assert_eq!(c.shape(RuleKind::GlobalPool), vec![-1, 128, 1, 1]);
    assert!(Case::new("GlobalAveragePool")
        .input("x", f32d(&[3]))
        .run(RuleKind::GlobalPool)
        .is_err());
}

#[test]
fn passthrough_with_skip() {
    let c = Case::new("Loop")
        .input("max_trip_count", td(&[], DataType::INT64))
        .input("cond", td(&[], DataType::BOOL))
        .input("input0", f32d(&[2, 3]))
        .outputs(2);
    let mut c = c;
    c.params.insert("skip".into(), Param::Int(2));
    let o = c.run(RuleKind::Passthrough).unwrap();
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].shape.to_vec(), vec![2, 3]);
    c.params.clear();
    assert!(c.run(RuleKind::Passthrough).is_ok());
    let c = Case::new("IdentityN").input("x0", f32d(&[1])).outputs(2);
    assert!(c.run(RuleKind::Passthrough).is_err());
}

#[test]
fn extreme_attribute_values_are_size_overflows() {
    let big = i64::MAX;
    let c = Case::new("Conv2D")
        .input("x", nchw(&[1, 3, 8, 8]))
        .input("filter", nchw(&[2, 3, 3, 3]))
        .ints("strides", &[1, 1, big, big])
        .ints("dilations", &[1, 1, big, big]);
    assert!(c.run(RuleKind::Conv).is_err());
    let c = Case::new("Conv2D")
        .input("x", nchw(&[1, 3, 8, 8]))
        .input("filter", nchw(&[2, 3, 3, 3]))
        .ints("pads", &[big, big, 0, 0]);
    let e = c.run(RuleKind::Conv).unwrap_err();
    assert!(e.starts_with(super::engine::OVERFLOW_PREFIX), "{e}");
    let c = Case::new("Conv2D")
        .input("x", nchw(&[1, 3, 8, 8]))
        .input("filter", nchw(&[2, 3, 3, 3]))
        .ints("pads", &[-5, 0, 0, 0]);
    assert!(c.run(RuleKind::Conv).is_err());
    let c = Case::new("TileD")
        .input("x", f32d(&[big, 2]))
        .ints("multiples", &[big, 1]);
    let e = c.run(RuleKind::Tile).unwrap_err();
    assert!(e.starts_with(super::engine::OVERFLOW_PREFIX), "{e}");
    let c = Case::new("PadD")
        .input("x", f32d(&[2]))
        .ints("paddings", &[big, big]);
    let e = c.run(RuleKind::Pad).unwrap_err();
    assert!(e.starts_with(super::engine::OVERFLOW_PREFIX), "{e}");
    let c = Case::new("StridedSliceD")
        .input("x", f32d(&[10]))
        .ints("begin", &[0])
        .ints("end", &[10])
        .ints("strides", &[big]);
    assert_eq!(c.shape(RuleKind::StridedSlice), vec![1]);
    let c = Case::new("StridedSliceD")
        .input("x", f32d(&[10]))
        .ints("begin", &[9])
        .ints("end", &[-11])
        .ints("strides", &[i64::MIN]);
    assert_eq!(c.shape(RuleKind::StridedSlice), vec![1]);
    let c = Case::new("Reshape")
        .input("x", f32d(&[2, 3]))
        .ints("shape", &[6])
        .attr("num_axes", AttrValue::Int(big));
    assert_eq!(c.shape(RuleKind::Reshape), vec![6]);
    let c = Case::new("Gather")
        .input("x", f32d(&[]))
        .input("indices", f32d(&[]))
        .input("axis", td(&[1], DataType::INT32));
    assert!(c.run(RuleKind::Gather).is_ok());
}
