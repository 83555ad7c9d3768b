from .drop import DropPath, drop_path
from .mlp import Mlp
