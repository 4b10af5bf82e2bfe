"""A small topic classifier laid out as a package: run it as a module from the zoo folder,

    python -m textcls.train --seed 0
"""
