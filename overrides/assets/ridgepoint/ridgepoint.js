// Ridgepoint page scripts: each block's code re-initialises on Material's document$ (instant navigation).
