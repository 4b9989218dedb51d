"""Lab code of the "Frontier open models" chapter.

The taught code of this chapter is the model registry itself
(:mod:`atlas.labkit.registry.models`); :mod:`atlas.labkit.checks.models` holds the checks that
hold it against published counts, real modules and a real forward pass.
"""

ROLE = "taught"
