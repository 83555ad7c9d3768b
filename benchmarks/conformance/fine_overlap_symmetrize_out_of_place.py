# source: https://github.com/scipy/scipy/pull/4401 (the safe form: the transpose added out of place)
# expect: none
# torch: ok
import torch
from torch import nn


def normalized_adjacency(edges, num_nodes):
    """D^-1/2 (A + I) D^-1/2 of the undirected graph given by directed edge pairs."""
    adj = torch.zeros(num_nodes, num_nodes)
    adj[edges[0], edges[1]] = 1.0
    adj = adj + adj.t()
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
