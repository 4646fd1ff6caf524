"""Citations: lessons cite docs/references.yml by key (``[@vllm]``); each page ends with its references."""
