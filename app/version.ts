/** kvscope's version, written into run records and shown by `--version` and the workbench. Keep equal to package.json. */
export const KVSCOPE_VERSION = '0.1.0';
