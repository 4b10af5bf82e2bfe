//! The optimizer of the checks that train (overfit, nan-trace): AdamW without weight decay.
//!
//! Half-precision parameters get f32 master copies: the update is computed on the masters and
//! written back rounded. Stepping AdamW on f16 parameters directly would blame the model for
//! the optimizer's own numerics (its eps, 1e-8, is 0 in f16, and a gradient element that rounds
//! to zero then gives 0/0), which is not what a check is there to find.

use candle_core::backprop::GradStore;
use candle_core::{DType, Result, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};

pub(crate) struct CheckOptimizer {
    adam: AdamW,
    /// Parameters stepped directly (f32, f64).
    direct: Vec<Var>,
    /// `(model parameter, its f32 master)` for half-precision parameters.
    masters: Vec<(Var, Var)>,
}

impl CheckOptimizer {
    pub(crate) fn new(vars: Vec<Var>, learning_rate: f64) -> Result<CheckOptimizer> {
        let mut direct = Vec::new();
        let mut masters = Vec::new();
        for var in vars.into_iter().filter(|v| v.dtype().is_float()) {
            if matches!(var.dtype(), DType::F16 | DType::BF16) {
                let master = Var::from_tensor(&var.as_detached_tensor().to_dtype(DType::F32)?)?;
                masters.push((var, master));
            } else {
                direct.push(var);
            }
        }
        let stepped = direct
            .iter()
            .cloned()
            .chain(masters.iter().map(|(_, m)| m.clone()))
            .collect();
        let adam = AdamW::new(
            stepped,
            ParamsAdamW {
                lr: learning_rate,
                weight_decay: 0.0,
                ..Default::default()
            },
        )?;
        Ok(CheckOptimizer {
            adam,
            direct,
            masters,
        })
    }

    /// One update from `grads` (as returned by `loss.backward()`).
    pub(crate) fn step(&mut self, grads: &GradStore) -> Result<()> {
        if self.masters.is_empty() {
            return self.adam.step(grads);
        }
        let mut store = GradStore::default();
        for var in &self.direct {
            if let Some(g) = grads.get(var.as_tensor()) {
                store.insert(var.as_tensor(), g.clone());
            }
        }
        for (var, master) in &self.masters {
            if let Some(g) = grads.get(var.as_tensor()) {
                store.insert(master.as_tensor(), g.to_dtype(DType::F32)?);
            }
        }
        self.adam.step(&store)?;
        for (var, master) in &self.masters {
            var.set(&master.as_detached_tensor().to_dtype(var.dtype())?)?;
        }
        Ok(())
    }

    /// Backward pass and one update.
    pub(crate) fn backward_step(&mut self, loss: &Tensor) -> Result<()> {
        let grads = loss.backward()?;
        self.step(&grads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn half_precision_parameters_move_through_f32_masters() -> Result<()> {
        let w = Var::from_tensor(&Tensor::new(&[1f32, -2.0], &Device::Cpu)?.to_dtype(DType::F16)?)?;
        let mut opt = CheckOptimizer::new(vec![w.clone()], 0.1)?;
        // One gradient element is exactly 0: AdamW on f16 directly would give 0/0 there.
        let loss = (w.as_tensor()
            * Tensor::new(&[1f32, 0.0], &Device::Cpu)?.to_dtype(DType::F16)?)?
        .sum_all()?;
        opt.backward_step(&loss)?;
        let v = w.to_dtype(DType::F32)?.to_vec1::<f32>()?;
        assert!((v[0] - 0.9).abs() < 1e-3, "{v:?}");
        assert_eq!(v[1], -2.0);
        Ok(())
    }
}
