// Merged into @jupyter/builder's Rspack configuration (package.json: jupyterlab.rspackConfig).
//
// Module and chunk ids by their order in the module graph instead of hashes: the default
// ("deterministic") hashes the container entry's identifier, which holds the absolute path of
// src/, so the bundle (and its content hash) differed between two clones of the same commit.
// The ids are this container's own (each extension has its own module scope), so their
// values need not be unique across extensions. .ci/run checks that a build from a fresh clone
// matches the committed one byte for byte.
module.exports = {
  optimization: { moduleIds: 'natural', chunkIds: 'natural' }
};
