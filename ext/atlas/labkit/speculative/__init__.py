"""atlas.labkit.speculative: the code the speculative-decoding chapter teaches; its checks are in
``atlas.labkit.checks.speculative``.

Taught modules (each quoted on its page with the ``labcode`` directive):

- :mod:`.sampling`: the speculative-sampling acceptance rule (batched), the residual
  distribution, the expected tokens per step, the speed-up and the best draft length.
- :mod:`.model`: a tiny transformer with rotary positions and a KV cache whose attention takes
  an explicit visibility mask, so that a whole token tree can be verified in one pass.
- :mod:`.tree`: token trees: parents, the tree attention mask, positions, root-to-leaf paths,
  trees from Medusa/EAGLE choice lists, and greedy acceptance of the longest matching path.
- :mod:`.decode`: greedy speculative decoding with a draft model or with prompt lookup, with
  the KV cache rolled back to the accepted prefix.
- :mod:`.suffix`: suffix decoding's drafter: a depth-bounded suffix trie with counts, the
  greedy walk by frequency, and a draft length that grows with the match.
- :mod:`.heads`: Medusa's heads and an EAGLE-style feature draft, their training losses and
  their greedy drafts.
- :mod:`.engine`: what a serving engine adds: batched verification of fixed-stride drafts,
  rewinding paged-KV bookkeeping, the roofline of a speculative step against batch size,
  and the crossover batch on a weights-only roofline.

:mod:`atlas.labkit.checks.speculative` holds what the labs need but the pages do not teach:
seeded distributions,
Monte Carlo estimates and their bounds, the plain decoding reference, and the upstream
functions (EAGLE, Megatron-LM) run from their source at the pins.
"""

ROLE = "taught"
