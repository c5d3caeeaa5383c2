"""Layer 5, the experiments that compare models: ``variations`` (Table 3, chapter 12),
``baseline`` (Table 2 in miniature, chapter 17) and ``flops`` (training cost by formula).
They may import any task and every layer below."""
