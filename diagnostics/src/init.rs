//! Reproducible parameters: a `VarBuilder` whose every parameter is drawn from a seeded stream.
//!
//! candle's CPU RNG cannot be seeded and `VarMap::all_vars()` comes back in hash order, so a check
//! that must give the same verdict for the same `--seed` builds its model through
//! [`seeded_var_builder`]. Each parameter is drawn from [`SeededRng::derive`]`(seed, name)`
//! following the `Init` hint the layer asked for (candle's own fan and gain rules), so its values
//! depend only on the seed and its full name, never on creation order. The created `Var`s are kept
//! in a [`ParamStore`], sorted by name, for the checks to read, train, snapshot and restore.

use crate::rng::SeededRng;
use candle_core::{DType, Device, Result, Shape, Tensor, Var};
use candle_nn::init::{Init, NormalOrUniform};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::VarBuilder;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The trainable parameters a [`seeded_var_builder`] created, by full name (`l1.weight`).
///
/// Cheap to clone (shared); the `VarBuilder` and every clone see the same parameters.
#[derive(Debug, Clone, Default)]
pub struct ParamStore {
    vars: Arc<Mutex<BTreeMap<String, Var>>>,
}

/// A copy of every parameter's values, to put back with [`ParamStore::restore`].
#[derive(Debug, Clone)]
pub struct Snapshot {
    values: Vec<(String, Tensor)>,
}

impl Snapshot {
    /// The saved value of the variable `name`.
    pub fn value(&self, name: &str) -> Option<&Tensor> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
}

impl ParamStore {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Var>> {
        // A panic while the lock was held cannot leave the map half-written (inserts are atomic).
        self.vars.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A store over existing named parameters (a user's model trained outside mldebug).
    pub fn from_vars(vars: impl IntoIterator<Item = (String, Var)>) -> ParamStore {
        ParamStore {
            vars: Arc::new(Mutex::new(vars.into_iter().collect())),
        }
    }

    /// A store over the parameters of a `VarMap` (the usual candle training setup), sorted by
    /// name. The store shares the `Var`s: restoring a snapshot restores the model's weights.
    pub fn from_varmap(varmap: &candle_nn::VarMap) -> ParamStore {
        let data = varmap.data().lock().unwrap_or_else(|e| e.into_inner());
        ParamStore::from_vars(data.iter().map(|(n, v)| (n.clone(), v.clone())))
    }

    /// Every parameter as `(name, var)`, sorted by name.
    pub fn named(&self) -> Vec<(String, Var)> {
        self.lock()
            .iter()
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect()
    }

    /// Every parameter, sorted by name (what an optimizer takes).
    pub fn vars(&self) -> Vec<Var> {
        self.lock().values().cloned().collect()
    }

    /// How many variables (parameters and buffers).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// No variable was created.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Copies every parameter's current values (deep copies, detached from any graph).
    pub fn snapshot(&self) -> Result<Snapshot> {
        let values = self
            .lock()
            .iter()
            .map(|(n, v)| Ok((n.clone(), v.as_detached_tensor().copy()?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Snapshot { values })
    }

    /// Writes `snapshot`'s values back in place (the same `Var`s, so the model sees them).
    pub fn restore(&self, snapshot: &Snapshot) -> Result<()> {
        let vars = self.lock();
        for (name, value) in &snapshot.values {
            if let Some(var) = vars.get(name) {
                var.set(value)?;
            }
        }
        Ok(())
    }
}

/// The seeded `SimpleBackend`: get-or-create by name, like `VarMap`, but reproducible.
struct SeededBackend {
    seed: u64,
    store: ParamStore,
}

impl SimpleBackend for SeededBackend {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        hint: Init,
        dtype: DType,
        dev: &Device,
    ) -> Result<Tensor> {
        let mut vars = self.store.lock();
        if let Some(var) = vars.get(name) {
            if var.shape() != &shape {
                candle_core::bail!(
                    "parameter `{name}` asked for with shape {shape:?} but it already exists with shape {:?}",
                    var.shape()
                );
            }
            return Ok(var.as_tensor().clone());
        }
        let value = draw(self.seed, name, &shape, hint, dtype, dev)?;
        let var = Var::from_tensor(&value)?;
        vars.insert(name.to_string(), var.clone());
        Ok(var.as_tensor().clone())
    }

    fn get_unchecked(&self, name: &str, _dtype: DType, _dev: &Device) -> Result<Tensor> {
        match self.store.lock().get(name) {
            Some(var) => Ok(var.as_tensor().clone()),
            None => candle_core::bail!(
                "parameter `{name}` does not exist yet; the seeded VarBuilder creates parameters with `get`"
            ),
        }
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.store.lock().contains_key(name)
    }
}

/// Draws the initial value of parameter `name` as candle's `Init::var` would, from the seeded stream.
///
/// Values are drawn on the host in `dtype` and then moved, so no device needs F64 support
/// (Metal has none).
fn draw(
    seed: u64,
    name: &str,
    shape: &Shape,
    hint: Init,
    dtype: DType,
    dev: &Device,
) -> Result<Tensor> {
    let mut rng = SeededRng::derive(seed, name);
    let host = &Device::Cpu;
    let value = match hint {
        Init::Const(c) => Tensor::ones(shape.clone(), dtype, host)?.affine(c, 0.0)?,
        Init::Randn { mean, stdev } => {
            rng.normal_tensor(shape.clone(), mean, stdev, dtype, host)?
        }
        Init::Uniform { lo, up } => rng.uniform_tensor(shape.clone(), lo, up, dtype, host)?,
        Init::Kaiming {
            dist,
            fan,
            non_linearity,
        } => {
            let fan = fan.for_shape(shape);
            let std = non_linearity.gain() / (fan as f64).sqrt();
            match dist {
                NormalOrUniform::Normal => {
                    rng.normal_tensor(shape.clone(), 0.0, std, dtype, host)?
                }
                NormalOrUniform::Uniform => {
                    let bound = 3f64.sqrt() * std;
                    rng.uniform_tensor(shape.clone(), -bound, bound, dtype, host)?
                }
            }
        }
    };
    value.to_device(dev)
}

/// A `VarBuilder` that creates every parameter from `SeededRng::derive(seed, name)`, and the store
/// that records the created parameters.
pub fn seeded_var_builder(
    seed: u64,
    dtype: DType,
    device: &Device,
) -> (ParamStore, VarBuilder<'static>) {
    let store = ParamStore::default();
    let backend = SeededBackend {
        seed,
        store: store.clone(),
    };
    let vb = VarBuilder::from_backend(Box::new(backend), dtype, device.clone());
    (store, vb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_nn::Module;

    fn values(store: &ParamStore) -> Vec<(String, Vec<f32>)> {
        store
            .named()
            .into_iter()
            .map(|(n, v)| (n, v.flatten_all().unwrap().to_vec1::<f32>().unwrap()))
            .collect()
    }

    #[test]
    fn same_seed_same_params_sorted_by_name() -> Result<()> {
        let build = |seed| -> Result<ParamStore> {
            let (store, vb) = seeded_var_builder(seed, DType::F32, &Device::Cpu);
            // Created out of name order on purpose.
            candle_nn::linear(4, 3, vb.pp("z"))?;
            candle_nn::linear(3, 2, vb.pp("a"))?;
            Ok(store)
        };
        let a = build(1)?;
        let names: Vec<String> = a.named().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a.bias", "a.weight", "z.bias", "z.weight"]);
        assert_eq!(values(&a), values(&build(1)?));
        assert_ne!(values(&a), values(&build(2)?));
        Ok(())
    }

    #[test]
    fn follows_the_init_hints() -> Result<()> {
        let (store, vb) = seeded_var_builder(0, DType::F32, &Device::Cpu);
        let ln = candle_nn::layer_norm(8, 1e-5, vb.pp("ln"))?;
        let _ = ln.forward(&Tensor::zeros((1, 8), DType::F32, &Device::Cpu)?)?;
        candle_nn::linear(100, 50, vb.pp("fc"))?;
        let v = values(&store);
        let get = |n: &str| v.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert!(get("ln.weight").iter().all(|&x| x == 1.0));
        assert!(get("ln.bias").iter().all(|&x| x == 0.0));
        // Kaiming normal, fan-in 100, ReLU gain: std = sqrt(2/100) ≈ 0.141.
        let w = get("fc.weight");
        let std = (w.iter().map(|x| x * x).sum::<f32>() / w.len() as f32).sqrt();
        assert!((std - 0.1414).abs() < 0.01, "std {std}");
        // Bias: uniform within ±1/sqrt(fan_in) = ±0.1.
        assert!(get("fc.bias").iter().all(|&x| x.abs() <= 0.1));
        Ok(())
    }

    #[test]
    fn same_name_twice_is_the_same_var_and_shape_mismatch_errors() -> Result<()> {
        let (store, vb) = seeded_var_builder(0, DType::F32, &Device::Cpu);
        let a = vb.get((2, 3), "w")?;
        let b = vb.get((2, 3), "w")?;
        assert_eq!(a.id(), b.id());
        assert_eq!(store.len(), 1);
        assert!(vb.get((3, 2), "w").is_err());
        Ok(())
    }

    #[test]
    fn a_varmap_store_shares_its_vars_sorted_by_name() -> Result<()> {
        let varmap = candle_nn::VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
        candle_nn::linear(2, 2, vb.pp("b"))?;
        candle_nn::linear(2, 2, vb.pp("a"))?;
        let store = ParamStore::from_varmap(&varmap);
        let names: Vec<String> = store.named().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a.bias", "a.weight", "b.bias", "b.weight"]);
        let snap = store.snapshot()?;
        let w = varmap.data().lock().unwrap()["a.weight"].clone();
        w.set(&Tensor::ones((2, 2), DType::F32, &Device::Cpu)?)?;
        store.restore(&snap)?;
        assert_ne!(w.flatten_all()?.to_vec1::<f32>()?, vec![1.0; 4]);
        Ok(())
    }

    #[test]
    fn snapshot_and_restore_put_values_back_in_place() -> Result<()> {
        let (store, vb) = seeded_var_builder(0, DType::F32, &Device::Cpu);
        let w = vb.get_with_hints(
            (2, 2),
            "w",
            Init::Randn {
                mean: 0.0,
                stdev: 1.0,
            },
        )?;
        let before = w.flatten_all()?.to_vec1::<f32>()?;
        let snap = store.snapshot()?;
        store.vars()[0].set(&Tensor::zeros((2, 2), DType::F32, &Device::Cpu)?)?;
        assert_eq!(w.flatten_all()?.to_vec1::<f32>()?, vec![0.0; 4]);
        store.restore(&snap)?;
        assert_eq!(w.flatten_all()?.to_vec1::<f32>()?, before);
        Ok(())
    }
}
