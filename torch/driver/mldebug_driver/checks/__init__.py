"""The checks, one module each: every check takes the Run (`run.py`: the subject, the request's
settings, the event channel) and returns ("measurement", dict) or ("skipped", reason). The
measurements' fields are in torch/CONTRACT.md; what they mean is judged in Rust."""

from .batch_leak import check_batch_leak
from .class_balance import check_class_balance
from .grad_flow import check_grad_flow
from .init_loss import check_init_loss
from .label_mask import check_label_mask
from .memory import check_memory
from .nan_trace import check_nan_trace
from .overfit import check_overfit

CHECKS = {
    "init-loss": check_init_loss,
    "class-balance": check_class_balance,
    "label-mask": check_label_mask,
    "grad-flow": check_grad_flow,
    "nan-trace": check_nan_trace,
    "batch-leak": check_batch_leak,
    "overfit": check_overfit,
    "memory": check_memory,
}
