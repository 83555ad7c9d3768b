from torch import nn

nz, ngf, ndf = 16, 8, 8


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


def d_block(c_in, c_out):
    # pre-activation discriminator block: LeakyReLU(negative_slope, inplace) then a strided conv
    return [nn.LeakyReLU(0.2, True), nn.Conv2d(c_in, c_out, 4, 2, 1, bias=False)]


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        layers = d_block(3, ndf) + d_block(ndf, ndf * 2)
        layers += [nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid()]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x).view(-1)
