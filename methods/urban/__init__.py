"""Methods of the urban family (cross-city region embedding): CoRE and its transfer baselines."""
