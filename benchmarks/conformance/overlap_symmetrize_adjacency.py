# source: https://github.com/scipy/scipy/pull/4401 (`X += X.T` as the usual shorthand for symmetrising, unsafe in place); pytorch/pytorch test/test_binary_ufuncs.py TestBinaryUfuncs.test_binary_op_mem_overlap (an input partially overlapping the output is refused)
# expect: AL203 at line 12
# torch: raises RuntimeError "unsupported operation"
import torch
from torch import nn


def normalized_adjacency(edges, num_nodes):
    """D^-1/2 (A + I) D^-1/2 of the undirected graph given by directed edge pairs."""
    adj = torch.zeros(num_nodes, num_nodes)
    adj[edges[0], edges[1]] = 1.0
    adj += adj.t()
    adj.clamp_(max=1.0)
    adj += torch.eye(num_nodes)
    deg = adj.sum(dim=1)
    return adj / torch.outer(deg.sqrt(), deg.sqrt())


class GraphConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, adj):
        return torch.relu(adj @ self.fc(x))


edges = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
layer = GraphConv(6)
out = layer(torch.randn(5, 6), normalized_adjacency(edges, 5))
