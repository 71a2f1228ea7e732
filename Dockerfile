# The chapter in a container: Go 1.26, Python, pip's JupyterLab in .venv and the GoNB kernel, set up by the
# README's command; it starts JupyterLab on the chapter's notebooks.
#
#   docker build -t agentrl . && docker run --rm -p 8888:8888 agentrl   # then open the http://127.0.0.1:8888/… line
#
# The build is one script, .ci/container-setup, which CI runs on its clean checkout too: as root, Python's venv
# (python3-venv); then, as the user, `go run ./kernelsetup`, and a kernel executes §12.1 headless, which leaves the
# Go build cache and the result store warm. Binder (mybinder.org) builds this file as it is: the user has uid 1000
# and owns the repository in $HOME, and `jupyter` on PATH is .venv's, which Binder starts as
# `jupyter notebook <its arguments>` in place of CMD. .devcontainer/devcontainer.json builds it too.
FROM golang:1.26-bookworm

ARG NB_USER=jovyan
ARG NB_UID=1000
ENV USER=${NB_USER} NB_UID=${NB_UID} HOME=/home/${NB_USER}
RUN useradd --create-home --uid ${NB_UID} --shell /bin/bash ${NB_USER}

WORKDIR ${HOME}
COPY --chown=${NB_UID} . ${HOME}
RUN .ci/container-setup ${NB_USER} && rm -rf /var/lib/apt/lists/*

ENV PATH=${HOME}/.venv/bin:${PATH}
USER ${NB_USER}
EXPOSE 8888
CMD ["jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser", "notebooks/"]
