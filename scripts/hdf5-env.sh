# Sourced by the scripts that build: says which HDF5 library the default
# (serial) build links. Installing Debian's libhdf5-openmpi-dev (the MPI
# tests do) switches pkg-config's `hdf5` to the MPI build; the default build
# stays on the serial library by naming its directory. An HDF5_DIR already
# set is kept, and elsewhere pkg-config decides as before.
if [ -z "${HDF5_DIR:-}" ]; then
    for dir in /usr/lib/*-linux-gnu/hdf5/serial; do
        if [ -e "$dir/include/hdf5.h" ]; then
            export HDF5_DIR="$dir"
            break
        fi
    done
fi
