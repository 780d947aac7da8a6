"""The audited chain: five stages, in the order `pipeline.STAGES` lists them."""
