class MiniTrainer:
    """The order of calls a training framework makes for each batch."""

    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def fit(self, module, batches):
        optimizer = module.configure_optimizers()
        for _ in range(self.max_epochs):
            for batch in batches:
                optimizer.zero_grad()
                loss = module.training_step(batch)
                loss.backward()
                optimizer.step()
                module.on_train_batch_end(loss)
