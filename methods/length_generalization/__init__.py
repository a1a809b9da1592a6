"""Length-generalisation methods: the Long-Short Alignment regulariser (Du et al., ICML 2025), plain
training, and output reparameterisation for the synthetic length-prediction case study."""
