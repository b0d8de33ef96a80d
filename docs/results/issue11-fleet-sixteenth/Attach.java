import com.sun.tools.attach.VirtualMachine;
public class Attach { public static void main(String[] a) throws Exception {
  VirtualMachine vm = VirtualMachine.attach(a[0]); vm.loadAgentPath(a[1], a[2]); vm.detach(); } }
