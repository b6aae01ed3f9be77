# dynrepl corpus program (public code, not written by the dynrepl project).
# Source:  https://github.com/karpathy/minGPT/blob/37baab71b9abea1b76ab957409a1cc2fbfba8a26/mingpt/__init__.py
# Commit:  37baab71b9abea1b76ab957409a1cc2fbfba8a26
# License: MIT (Copyright (c) 2020 Andrej Karpathy)
# Changes from the original: none (verbatim).
