//! The declarative ONNX → GE table: one GE type, GE port names in ONNX input/output order and
//! attribute renames per ONNX op type, and the float attributes whose defaults differ.
//!
//! The port names are GE's (the registry's builtin prototypes declare the same ones); the
//! importer takes them from the registered prototype when the type has one, so the table's
//! names are the fallback for unregistered types.

/// One declarative mapping.
#[derive(Debug)]
pub struct Entry {
    /// ONNX op type (standard domain).
    pub onnx: &'static str,
    /// GE op type.
    pub ge: &'static str,
    /// GE input port names, in ONNX input order.
    pub inputs: &'static [&'static str],
    /// GE output port names, in ONNX output order.
    pub outputs: &'static [&'static str],
    /// `(onnx attribute, GE attribute)` renames; other attributes keep their names.
    pub renames: &'static [(&'static str, &'static str)],
}

macro_rules! entries {
    ($( $onnx:literal => $ge:literal [$($i:literal),*] -> [$($o:literal),*] $({ $($a:literal : $b:literal),* })? ;)*) => {
        /// The declarative ONNX → GE table.
        pub static TABLE: &[Entry] = &[$(Entry {
            onnx: $onnx,
            ge: $ge,
            inputs: &[$($i),*],
            outputs: &[$($o),*],
            renames: &[$($(($a, $b)),*)?],
        }),*];
    };
}

entries! {
    "Add" => "Add" ["x1", "x2"] -> ["y"];
    "Sub" => "Sub" ["x1", "x2"] -> ["y"];
    "Mul" => "Mul" ["x1", "x2"] -> ["y"];
    "Div" => "RealDiv" ["x1", "x2"] -> ["y"];
    "Pow" => "Pow" ["x1", "x2"] -> ["y"];
    "Mod" => "Mod" ["x1", "x2"] -> ["y"];
    "Equal" => "Equal" ["x1", "x2"] -> ["y"];
    "Less" => "Less" ["x1", "x2"] -> ["y"];
    "Greater" => "Greater" ["x1", "x2"] -> ["y"];
    "LessOrEqual" => "LessEqual" ["x1", "x2"] -> ["y"];
    "GreaterOrEqual" => "GreaterEqual" ["x1", "x2"] -> ["y"];
    "And" => "LogicalAnd" ["x1", "x2"] -> ["y"];
    "Or" => "LogicalOr" ["x1", "x2"] -> ["y"];
    "Not" => "LogicalNot" ["x"] -> ["y"];
    "Xor" => "LogicalXor" ["x1", "x2"] -> ["y"];
    "BitwiseAnd" => "BitwiseAnd" ["x1", "x2"] -> ["y"];
    "BitwiseOr" => "BitwiseOr" ["x1", "x2"] -> ["y"];
    "BitwiseXor" => "BitwiseXor" ["x1", "x2"] -> ["y"];
    "BitwiseNot" => "Invert" ["x"] -> ["y"];
    "Relu" => "Relu" ["x"] -> ["y"];
    "Sigmoid" => "Sigmoid" ["x"] -> ["y"];
    "Tanh" => "Tanh" ["x"] -> ["y"];
    "Gelu" => "Gelu" ["x"] -> ["y"];
    "Erf" => "Erf" ["x"] -> ["y"];
    "Exp" => "Exp" ["x"] -> ["y"];
    "Log" => "Log" ["x"] -> ["y"];
    "Sqrt" => "Sqrt" ["x"] -> ["y"];
    "Abs" => "Abs" ["x"] -> ["y"];
    "Neg" => "Neg" ["x"] -> ["y"];
    "Reciprocal" => "Reciprocal" ["x"] -> ["y"];
    "Floor" => "Floor" ["x"] -> ["y"];
    "Ceil" => "Ceil" ["x"] -> ["y"];
    "Round" => "Round" ["x"] -> ["y"];
    "Sign" => "Sign" ["x"] -> ["y"];
    "Sin" => "Sin" ["x"] -> ["y"];
    "Cos" => "Cos" ["x"] -> ["y"];
    "Tan" => "Tan" ["x"] -> ["y"];
    "Atan" => "Atan" ["x"] -> ["y"];
    "Asin" => "Asin" ["x"] -> ["y"];
    "Acos" => "Acos" ["x"] -> ["y"];
    "Sinh" => "Sinh" ["x"] -> ["y"];
    "Cosh" => "Cosh" ["x"] -> ["y"];
    "Asinh" => "Asinh" ["x"] -> ["y"];
    "Acosh" => "Acosh" ["x"] -> ["y"];
    "Atanh" => "Atanh" ["x"] -> ["y"];
    "IsNaN" => "IsNan" ["x"] -> ["y"];
    "IsInf" => "IsInf" ["x"] -> ["y"];
    "Softplus" => "Softplus" ["x"] -> ["y"];
    "Softsign" => "Softsign" ["x"] -> ["y"];
    "Mish" => "Mish" ["x"] -> ["y"];
    "HardSwish" => "HardSwish" ["x"] -> ["y"];
    "Swish" => "Swish" ["x"] -> ["y"] { "alpha": "scale" };
    "ThresholdedRelu" => "ThresholdedRelu" ["x"] -> ["y"];
    "Shrink" => "HardShrink" ["input_x"] -> ["output_y"];
    "Identity" => "Identity" ["x"] -> ["y"];
    "Elu" => "Elu" ["x"] -> ["y"];
    "Selu" => "Selu" ["x"] -> ["y"];
    "Celu" => "Celu" ["x"] -> ["y"];
    "HardSigmoid" => "HardSigmoid" ["x"] -> ["y"];
    "LeakyRelu" => "LeakyRelu" ["x"] -> ["y"] { "alpha": "negative_slope" };
    "PRelu" => "PRelu" ["x", "weight"] -> ["y"];
    "Flatten" => "Flatten" ["x"] -> ["y"];
    "Reshape" => "Reshape" ["x", "shape"] -> ["y"];
    "Expand" => "Expand" ["x", "shape"] -> ["y"];
    "Tile" => "Tile" ["x", "multiples"] -> ["y"];
    "Where" => "Select" ["condition", "x1", "x2"] -> ["y"];
    "Range" => "Range" ["start", "limit", "delta"] -> ["y"];
    "Slice" => "StridedSliceV2" ["x", "begin", "end", "?axes", "?strides"] -> ["y"];
    "Clip" => "ClipByValue" ["x", "?clip_value_min", "?clip_value_max"] -> ["y"];
    "Pad" => "PadV3" ["x", "paddings", "?constant_values"] -> ["y"];
    "Resize" => "Resize" ["x", "?roi", "?scales", "?sizes"] -> ["y"];
    "TopK" => "TopKV2" ["x", "k"] -> ["values", "indices"] { "axis": "dim" };
    "Sum" => "AddN" ["x*"] -> ["y"];
    "Einsum" => "Einsum" ["x*"] -> ["y"];
    "GlobalAveragePool" => "GlobalAveragePool" ["x"] -> ["y"];
    "GlobalMaxPool" => "GlobalMaxPool" ["x"] -> ["y"];
    "GatherElements" => "GatherElements" ["x", "index"] -> ["y"] { "axis": "dim" };
    "GatherND" => "GatherNd" ["x", "indices"] -> ["y"];
    "ScatterND" => "ScatterNd" ["x", "indices", "updates"] -> ["y"];
    "ScatterElements" => "ScatterElements" ["data", "indices", "updates"] -> ["y"];
    // Opsets 9-10: the same op under its old name.
    "Scatter" => "ScatterElements" ["data", "indices", "updates"] -> ["y"];
    "CumSum" => "Cumsum" ["x", "axis"] -> ["y"];
    "CumProd" => "Cumprod" ["x", "axis"] -> ["y"];
    "NonZero" => "NonZero" ["x"] -> ["y"];
    "InstanceNormalization" => "InstanceNorm" ["x", "gamma", "beta"] -> ["y"];
    "LRN" => "LRN" ["x"] -> ["y"];
    "DepthToSpace" => "DepthToSpace" ["x"] -> ["y"];
    "SpaceToDepth" => "SpaceToDepth" ["x"] -> ["y"];
    "Dropout" => "Dropout" ["x", "?ratio", "?training_mode"] -> ["y", "mask"];
    "Trilu" => "Trilu" ["x", "?k"] -> ["y"];
    "OneHot" => "OneHot" ["indices", "depth", "values"] -> ["y"];
    "ArgMax" => "ArgMaxD" ["x"] -> ["y"] { "axis": "dimension", "keepdims": "keep_dims" };
    "ArgMin" => "ArgMinD" ["x"] -> ["y"] { "axis": "dimension", "keepdims": "keep_dims" };
    "Softmax" => "SoftmaxV2" ["x"] -> ["y"];
    "Hardmax" => "HardMax" ["x"] -> ["y"];
    "LogSoftmax" => "LogSoftmaxV2" ["logits"] -> ["logsoftmax"];
    "Conv" => "Conv2D" ["x", "filter", "?bias", "?offset_w"] -> ["y"];
    "LSTM" => "CommonLSTM" ["x", "w", "r", "?b", "?sequence_lens", "?initial_h", "?initial_c", "?p"] -> ["y", "y_h", "y_c"];
    "GRU" => "CommonGRU" ["x", "w", "r", "?b", "?sequence_lens", "?initial_h"] -> ["y", "y_h"];
    "ConvTranspose" => "Conv2DTransposeD" ["x", "filter", "?bias"] -> ["y"];
    "MaxPool" => "MaxPoolV3" ["x"] -> ["y"];
    "AveragePool" => "AvgPoolV2" ["x"] -> ["y"];
    "BatchNormalization" => "BatchNorm" ["x", "scale", "offset", "mean", "variance"] -> ["y", "batch_mean", "batch_variance"];
    "LayerNormalization" => "LayerNorm" ["x", "gamma", "?beta"] -> ["y", "mean", "variance"];
    "MatMul" => "BatchMatMulV2" ["x1", "x2"] -> ["y"];
    "Gemm" => "MatMulV2" ["x1", "x2", "?bias"] -> ["y"];
    "Cast" => "Cast" ["x"] -> ["y"];
    "CastLike" => "Cast" ["x", "target_type"] -> ["y"];
    "Size" => "Size" ["x"] -> ["y"];
    "Shape" => "Shape" ["x"] -> ["y"];
    "ConstantOfShape" => "Fill" ["dims"] -> ["y"];
    "Concat" => "ConcatV2D" ["x*"] -> ["y"];
    "Split" => "SplitD" ["x"] -> ["y*"];
    "Gather" => "GatherV2D" ["x", "indices"] -> ["y"];
    "Transpose" => "TransposeD" ["x"] -> ["y"];
    "Squeeze" => "Squeeze" ["x"] -> ["y"];
    "Unsqueeze" => "Unsqueeze" ["x"] -> ["y"];
    "ReduceSum" => "ReduceSumD" ["x"] -> ["y"];
    "ReduceMean" => "ReduceMeanD" ["x"] -> ["y"];
    "ReduceMax" => "ReduceMaxD" ["x"] -> ["y"];
    "ReduceMin" => "ReduceMinD" ["x"] -> ["y"];
    "ReduceProd" => "ReduceProdD" ["x"] -> ["y"];
    "ReduceL2" => "ReduceL2" ["x", "?axes"] -> ["y"];
    "ReduceLogSumExp" => "ReduceLogSumExp" ["x", "?axes"] -> ["y"];
    "ReduceLogSum" => "ReduceLogSum" ["x", "?axes"] -> ["y"];
    "Max" => "Maximum" ["x1", "x2"] -> ["y"];
    "Min" => "Minimum" ["x1", "x2"] -> ["y"];
    "BitShift" => "RightShift" ["x", "y"] -> ["z"];
    "SoftmaxCrossEntropyLoss" => "SoftmaxCrossEntropyLoss" ["scores", "labels", "?weights"] -> ["loss", "log_prop"];
    "NegativeLogLikelihoodLoss" => "NLLLoss" ["x", "target", "?weight"] -> ["y", "total_weight"];
    "RMSNormalization" => "RmsNorm" ["x", "gamma"] -> ["y", "rstd"];
    "GridSample" => "GridSampler2D" ["x", "grid"] -> ["y"];
    "QuantizeLinear" => "Quantize" ["x", "scales", "?zero_points"] -> ["y"];
    "Constant" => "Const" [] -> ["y"];
    "If" => "If" ["cond"] -> ["output*"];
    "Loop" => "Loop" ["?max_trip_count", "?cond", "input*"] -> ["output*"];
}

/// The table entry of an ONNX op type (hashed look-up).
pub fn entry(onnx: &str) -> Option<&'static Entry> {
    static INDEX: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, &'static Entry>> =
        std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| TABLE.iter().map(|e| (e.onnx, e)).collect())
        .get(onnx)
        .copied()
}

/// Float attributes whose GE and ONNX defaults differ:
/// `(GE type, GE attribute, ONNX attribute, GE default, ONNX default)`.
pub(super) const DEFAULTS_DIFFER: &[(&str, &str, &str, f32, f32)] = &[
    ("LeakyRelu", "negative_slope", "alpha", 0.0, 0.01),
    ("HardSigmoid", "alpha", "alpha", 1.0 / 6.0, 0.2),
];
