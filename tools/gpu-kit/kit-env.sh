# Sourced (POSIX sh) by the GPU kit's launchers in bin/ and by env.sh, with $kit set to the kit's
# folder: points Open MPI, PMIx and the dynamic loader at the kit, wherever it was copied to.
# Uses no command outside the shell, so that it works under `env -i PATH=<kit>/bin`.
case $kit in /*) ;; *) kit=$PWD/$kit ;; esac
export OPAL_PREFIX="$kit" OPAL_EXEC_PREFIX="$kit" OPAL_BINDIR="$kit/bin" OPAL_LIBDIR="$kit/lib" \
  OPAL_PKGLIBDIR="$kit/lib/openmpi3" OPAL_DATAROOTDIR="$kit/share" OPAL_DATADIR="$kit/share" \
  OPAL_PKGDATADIR="$kit/share/openmpi" OPAL_SYSCONFDIR="$kit/etc" \
  OMPI_MCA_mca_base_component_path="$kit/lib/openmpi3" \
  PMIX_PREFIX="$kit" PMIX_PKGLIBDIR="$kit/lib/pmix" PMIX_PKGDATADIR="$kit/share/pmix" PMIX_SYSCONFDIR="$kit/etc" \
  PMIX_MCA_mca_base_component_path="$kit/lib/pmix"
# ZT_KIT_LD_PATH (set by env.sh) also names the machine's cuBLAS/NCCL folders and, where the
# machine's libstdc++ is older than the one the kit was built with, lib/compat.
case ":${LD_LIBRARY_PATH:-}:" in
  *":${ZT_KIT_LD_PATH:-$kit/lib}:"*) ;;
  *) export LD_LIBRARY_PATH="${ZT_KIT_LD_PATH:-$kit/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
