//! What one traced forward pass tells about the model's layers: each traced module's output
//! bytes and the shapes around each convolution, read by the estimate ([`super::measure`]) and
//! by the backward probe ([`super::backward`]).

use crate::trace::Frame;
use mldebug_memory::measured::ModuleActivation;

/// What one traced forward pass tells about the model's layers.
pub(crate) struct Layers {
    /// Each traced module's output (summed when a module runs more than once).
    pub(crate) modules: Vec<ModuleActivation>,
    /// Each traced `conv2d` layer's name, input shape and output shape (first call).
    pub(crate) convs: Vec<(String, Vec<usize>, Vec<usize>)>,
}

/// Room for every frame of the zoo's and typical small models' forward passes.
pub(crate) const FRAMES: usize = 4096;

/// The frames of one forward pass as layers: each traced module's output bytes (`size` per
/// value), and the shapes around each traced convolution.
pub(crate) fn traced_layers(frames: Vec<Frame>, size: usize) -> Layers {
    let mut layers = Layers {
        modules: Vec::new(),
        convs: Vec::new(),
    };
    for f in frames {
        let b = (f.shape.iter().product::<usize>() * size) as f64;
        if f.kind == "conv2d" && !layers.convs.iter().any(|(m, _, _)| *m == f.module) {
            layers
                .convs
                .push((f.module.clone(), f.input_shape.clone(), f.shape.clone()));
        }
        match layers.modules.iter_mut().find(|m| m.module == f.module) {
            Some(m) => m.bytes += b,
            None => layers.modules.push(ModuleActivation {
                module: f.module,
                kind: f.kind.to_string(),
                bytes: b,
            }),
        }
    }
    layers
}
